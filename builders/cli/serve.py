"""``vqabench serve``: a scripted OpenAI-compatible endpoint on 127.0.0.1, to try the model-facing commands offline."""

from __future__ import annotations

import argparse

from builders.options.numbers import int_at_least

# The server and its responders load inside the handler: lazy for start-up speed.


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="a scripted OpenAI-compatible endpoint on 127.0.0.1 (VideoLLM, builder and judge), to try "
        "evaluate, build and judge offline",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Serves POST /v1/chat/completions on 127.0.0.1 until Ctrl-C (or --stop), answering as a SCRIPTED\n"
            "model (rule-based responders, not a real model: the numbers it produces describe the tooling):\n"
            "a VideoLLM for every evaluate command, the LLM of every build, and the judge. Structured replies\n"
            "name the item they answer (item_id), so the item binding accepts them. Give the URL it prints to\n"
            "any LLM command with --llm-api-key-env none:\n"
            "  vqabench serve --port 8765 --detach\n"
            "  vqabench <command> ... --llm-model scripted --llm-base-url http://127.0.0.1:8765/v1 --llm-api-key-env none\n"
            "  vqabench serve --port 8765 --stop\n"
            "The getting-started guide (docs/getting-started.md) runs every command against it."
        ),
    )
    parser.add_argument("--port", type=int_at_least(0, 65535), default=0,
                        help="TCP port on 127.0.0.1 (default 0: a free one, printed)")  # fmt: skip
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--detach", action="store_true",
                      help="serve in the background and return once it is listening (POSIX only); "
                      "'vqabench serve --port PORT --stop' stops it")  # fmt: skip
    mode.add_argument("--stop", action="store_true", help="stop the endpoint serving on --port")
    parser.set_defaults(func=_serve)


def _serve(args: argparse.Namespace) -> int:
    from builders.scripted.served import ServedModel
    from builders.scripted.server import ScriptedServer, stop_server

    if args.stop:
        if not args.port:
            raise ValueError("--stop needs the --port the endpoint serves on")
        stop_server(args.port)
        print(f"vqabench serve: stopped the endpoint on port {args.port}")
        return 0
    server = ScriptedServer(ServedModel(), port=args.port)  # listening from here: no request is lost
    print(f"vqabench serve: scripted endpoint at {server.url} (not a real model)", flush=True)
    print(f"  --llm-base-url {server.url} --llm-api-key-env none", flush=True)
    if args.detach:
        server.detach()
        print(f"  serving in the background; stop it with: vqabench serve --port {server.port} --stop")
        return 0
    print("  Ctrl-C stops it", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
