"""The MCP server's stdio loop (memdir.entry.mcp_server): the SDK's, except that end of input does not cancel the
requests still running, so a client that pipes its requests and closes stdin gets every answer."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

CANCELLED = "notifications/cancelled"  # the client gave up on a request: it will not be answered
DRAIN_TIMEOUT_S = 120.0  # after end of input, how long requests still running may take to answer


async def serve_stdio_answering_all(server: MCPServer, drain_timeout_s: float = DRAIN_TIMEOUT_S) -> None:
    """`server.run("stdio")`, except that end of input does not cancel requests still running.

    The SDK's loop cancels every in-flight handler when stdin closes, so a client that pipes
    `initialize` and a `tools/call` and then closes stdin got only the initialize result. Here the
    server reads through a relay that passes end of input on only once every request it accepted
    has been answered (or cancelled by the client), or `drain_timeout_s` has passed.
    """
    import anyio
    import mcp_types
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    pending: set = set()
    answered = anyio.Event()

    async with stdio_server() as (wire_in, wire_out):
        to_server, server_in = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        server_out, from_server = anyio.create_memory_object_stream[SessionMessage](0)

        async def relay_in() -> None:
            nonlocal answered
            async with to_server:
                async for item in wire_in:
                    message = getattr(item, "message", None)
                    if isinstance(message, mcp_types.JSONRPCRequest):
                        if not pending:
                            answered = anyio.Event()
                        pending.add(message.id)
                    elif isinstance(message, mcp_types.JSONRPCNotification) and message.method == CANCELLED:
                        _settle(pending, (message.params or {}).get("requestId"), answered)
                    try:
                        await to_server.send(item)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        return  # the server stopped reading
                if pending:  # end of input: answer what was asked first
                    with anyio.move_on_after(drain_timeout_s):
                        await answered.wait()

        async def relay_out() -> None:
            async with wire_out, from_server:
                async for item in from_server:
                    if isinstance(item.message, (mcp_types.JSONRPCResponse, mcp_types.JSONRPCError)):
                        _settle(pending, item.message.id, answered)
                    await wire_out.send(item)

        async with anyio.create_task_group() as writing:
            writing.start_soon(relay_out)  # ends when the server closes its side, after its last answer
            async with anyio.create_task_group() as reading:
                reading.start_soon(relay_in)
                lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs, given our streams
                await lowlevel.run(server_in, server_out, lowlevel.create_initialization_options())
                reading.cancel_scope.cancel()  # the server is done: stop waiting for input


def _settle(pending: set, request_id: object, answered) -> None:
    pending.discard(request_id)
    if not pending:
        answered.set()
