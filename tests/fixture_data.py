"""A small ProgrammableWeb-shaped world for fast tests: 24 APIs, 40 mashups."""

APIS = [
    (
        0,
        "Google Maps",
        ["Mapping", "Viewer"],
        "Google Maps lets developers embed interactive maps, markers, geocoding and directions in web pages.",
    ),
    (
        1,
        "OpenStreetMap",
        ["Mapping", "Open Data"],
        "OpenStreetMap offers free editable map data of the world, tiles and geographic features.",
    ),
    (2, "Bing Maps", ["Mapping"], "Bing Maps provides maps, aerial imagery, routes and location search."),
    (
        3,
        "Yelp",
        ["Reviews", "Food"],
        "Yelp gives access to local business listings, restaurant reviews, ratings and photos.",
    ),
    (
        4,
        "Zomato",
        ["Food", "Reviews"],
        "Zomato restaurant search, menus, cuisines and user reviews for cities worldwide.",
    ),
    (
        5,
        "Flickr",
        ["Photos", "Social"],
        "Flickr photo sharing: search, upload and tag photos, browse photos by location.",
    ),
    (
        6,
        "Instagram",
        ["Photos", "Social"],
        "Instagram photos and videos shared by users, with likes, comments and locations.",
    ),
    (
        7,
        "Twitter",
        ["Social", "Microblogging"],
        "Twitter lets applications read and post tweets, follow users and search the timeline.",
    ),
    (8, "Facebook", ["Social"], "Facebook Graph API for friends, profiles, pages, posts and social login."),
    (9, "OpenWeatherMap", ["Weather"], "Current weather, forecasts and historical weather data for any location."),
    (
        10,
        "Weather Underground",
        ["Weather"],
        "Weather Underground forecasts, conditions, radar and severe weather alerts.",
    ),
    (11, "PayPal", ["Payments", "eCommerce"], "PayPal online payments, checkout, invoices and money transfers."),
    (12, "Stripe", ["Payments"], "Stripe payment processing for credit cards, subscriptions and billing."),
    (13, "Last.fm", ["Music"], "Last.fm music metadata, artists, albums, scrobbling and listening charts."),
    (14, "Spotify", ["Music", "Streaming"], "Spotify music streaming: tracks, playlists, albums and artist search."),
    (15, "YouTube", ["Video", "Media"], "YouTube video search, playback, upload, channels and comments."),
    (16, "Vimeo", ["Video"], "Vimeo video hosting, players, channels and uploads."),
    (17, "Bing Search", ["Search"], "Bing web search, image search and news search results."),
    (
        18,
        "Twilio",
        ["Telephony", "Messaging"],
        "Twilio sends SMS text messages and makes voice calls from applications.",
    ),
    (19, "SendGrid", ["Email", "Messaging"], "SendGrid transactional email delivery, templates and email analytics."),
    (20, "Eventbrite", ["Events"], "Eventbrite event listings, ticket sales and attendee registration."),
    (
        21,
        "Google Translate",
        ["Translation", "Language"],
        "Translate text between languages and detect the language of text.",
    ),
    (22, "eBay", ["eCommerce", "Auctions"], "eBay product listings, auctions, bids and item search."),
    (
        23,
        "Amazon Product Advertising",
        ["eCommerce", "Shopping"],
        "Amazon product search, prices, reviews and affiliate links.",
    ),
]

MASHUPS = [
    (0, "Food Map", "Shows nearby restaurants on a map with their reviews and ratings.", [0, 3]),
    (1, "Dinner Finder", "Find restaurants and read reviews, displayed on an interactive map.", [0, 4]),
    (2, "Yelp Mapper", "Maps local businesses and restaurant reviews from Yelp.", [0, 3]),
    (3, "Photo Atlas", "Browse geotagged photos on a world map.", [0, 5]),
    (4, "Insta Places", "See Instagram photos taken near a location on a map.", [0, 6]),
    (5, "Weather Map", "Current weather conditions and forecasts shown on a map.", [0, 9]),
    (6, "Storm Watch", "Severe weather alerts and radar plotted on a map.", [2, 10]),
    (7, "Tweet Map", "Plots tweets on a map by where they were posted.", [0, 7]),
    (8, "Social Pulse", "Aggregates tweets and Facebook posts about a topic.", [7, 8]),
    (9, "Shop Compare", "Compare product prices on Amazon and eBay.", [22, 23]),
    (10, "Quick Checkout", "An online store checkout with PayPal and Stripe payments.", [11, 12]),
    (11, "Tune Finder", "Discover artists and play tracks with music charts.", [13, 14]),
    (12, "Music Videos", "Watch music videos of your favourite artists from their listening charts.", [13, 15]),
    (13, "Event Map", "Find concerts and events near you on a map and buy tickets.", [0, 20]),
    (14, "SMS Alerts", "Receive weather alerts by SMS text message.", [9, 18]),
    (15, "Mail Digest", "Sends an email digest of tweets every morning.", [7, 19]),
    (16, "Translate Tweets", "Translates tweets into your language.", [7, 21]),
    (17, "Open Trails", "Hiking trails on free open map data.", [1]),
    (18, "Video Search", "Search YouTube and Vimeo videos in one place.", [15, 16]),
    (19, "News Search", "Search the web and news with Bing.", [17]),
    (20, "Restaurant Photos", "Photos of restaurant dishes with reviews.", [3, 5]),
    (21, "Trip Weather", "Weather forecast along a driving route on a map.", [2, 9]),
    (22, "Pay by Text", "Send payment requests by SMS text message.", [11, 18]),
    (23, "Concert Tweets", "Tweets about events and concerts.", [7, 20]),
    (24, "Photo Share", "Share Flickr photos to Facebook friends.", [5, 8]),
    (25, "Local Deals Map", "Local restaurants and shops with reviews on a Google map.", [0, 3]),
    (26, "Geo Tweets", "Geolocated tweets and photos around a place on a map.", [0, 6, 7]),
    (27, "Playlist Share", "Share Spotify playlists with friends on Facebook.", [8, 14]),
    (28, "Bid Watch", "Track eBay auctions and get an email when you are outbid.", [19, 22]),
    (29, "World Weather", "A map of weather around the world.", [1, 9]),
    (30, "Subscription Box", "Monthly subscription billing for a shop.", [12]),
    (31, "Video Translate", "Translate YouTube video titles and comments.", [15, 21]),
    (32, "Cafe Map", "Coffee shops and their ratings on a map.", [0, 4]),
    (33, "Travel Photos", "Travel photos from Flickr and Instagram on a map.", [0, 5, 6]),
    (34, "Ticket SMS", "Event tickets delivered by text message.", [18, 20]),
    (35, "Music Events", "Concerts of the artists you listen to.", [13, 20]),
    (36, "Weather Tweets", "Tweets about the weather where you are.", [7, 9]),
    (37, "Product Videos", "Product reviews and videos for Amazon products.", [15, 23]),
    (38, "Street Map Photos", "Flickr photos on an OpenStreetMap map.", [1, 5]),
    (39, "Restaurant Booking Alerts", "Restaurant reviews and SMS reminders for your booking.", [3, 18]),
]


def api_rows():
    return [
        {
            "id": i,
            "name": n,
            "url": f"/api/{n.lower().replace(' ', '-')}",
            "categories": c,
            "description": d,
            "source": "fixture",
        }
        for i, n, c, d in APIS
    ]


def mashup_rows():
    names = {i: n for i, n, _, _ in APIS}
    return [
        {
            "id": i,
            "name": n,
            "url": "",
            "categories": [],
            "description": d,
            "api_ids": ids,
            "api_names": [names[a] for a in ids],
        }
        for i, n, d, ids in MASHUPS
    ]
