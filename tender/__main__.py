from tender.cli import main

main()
