"""A small MCP server (stdio) whose tools/list comes in pages of two, with a nextCursor between them: the
client must follow the cursor to see every tool."""

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOLS = [
    ("send_invoice", "Send an invoice to a customer by email."),
    ("refund_payment", "Refund a card payment, in full or in part."),
    ("list_customers", "List the customers of the shop."),
    ("create_coupon", "Create a discount coupon code."),
    ("ship_order", "Book a courier to ship an order."),
]
PAGE = 2


async def list_tools(ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    start = int(params.cursor) if params and params.cursor else 0
    page = [
        types.Tool(
            name=name, description=text, input_schema={"type": "object", "properties": {"id": {"type": "string"}}}
        )
        for name, text in TOOLS[start : start + PAGE]
    ]
    following = start + PAGE
    return types.ListToolsResult(tools=page, next_cursor=str(following) if following < len(TOOLS) else None)


async def main() -> None:
    server = Server("paged-shop", on_list_tools=list_tools)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
