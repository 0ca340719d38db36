#!/usr/bin/env python3
"""A TCP forwarder on loopback, for trying a network partition between one server and its database.

    python3 Scripts/tcp-forward.py TARGET_PORT [LISTEN_PORT]

Listens on 127.0.0.1:LISTEN_PORT (a free port when not given), forwards every connection to 127.0.0.1:TARGET_PORT, and
prints the port it listens on. `kill -STOP PID` freezes it, as a partition does: the kernel still takes new connections
and data, and nothing comes back; `kill -CONT PID` ends the partition. Point one `iapkit serve` at the forwarder's port
and the others at the database's own (docs/scale.md, "What it survives").
"""
import asyncio
import signal
import sys


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def main():
    # A parent may have blocked these (a test runner does), and the child inherits its mask.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
    target = int(sys.argv[1])
    listen = int(sys.argv[2]) if len(sys.argv) > 2 else 0

    async def forward(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer))

    server = await asyncio.start_server(forward, "127.0.0.1", listen)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
