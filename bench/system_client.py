"""The system client's own overhead per question, at concurrency 16, against a local server
that answers at once.

    python bench/system_client.py [--questions 3000] [--repeats 5] [--concurrency 16]

The server is a separate process (asyncio, raw HTTP/1.1 keep-alive on 127.0.0.1) that
sends one fixed reply (an answer, three contexts as text, usage) to every POST without
reading it: what it costs is not ours. The client is the real path of a live run:
:func:`ragassay.system.ask_all` with an :class:`~ragassay.system.HttpSystem` (request
template, the one HTTP client with its deadline and size limit, reply reading into a
prediction, progress bar off, no cache). Reported per question, median of the repeats:

- ``wall ms/question``: the batch's wall time / questions (server included: an upper
  bound of what we add to a system that answers instantly);
- ``client cpu ms/question``: this process's CPU time / questions (the client alone).

Target: ≤ 1 ms per question (then 10,000 questions cost us ≤ 10 s). Not a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SERVER = r"""
import asyncio, json, sys
BODY = json.dumps({"answer": {"text": "The fee is 4 euros [1].", "status": "supported"},
                   "retrieved": [{"text": "The fee is 4 euros per month.", "score": 0.9},
                                 {"text": "Payment is due on the first day.", "score": 0.5},
                                 {"text": "Shipping takes 3 days.", "score": 0.1}],
                   "usage": {"prompt_tokens": 120, "completion_tokens": 9},
                   "system_version": "bench"}).encode()
REPLY = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
         + str(len(BODY)).encode() + b"\r\n\r\n" + BODY)

async def handle(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            await reader.readexactly(length)
            writer.write(REPLY)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()

async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=256)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()

asyncio.run(main())
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()

    from ragassay.schema import Question
    from ragassay.system import HttpSystem, SystemConfig, ask_all

    server = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        cfg = SystemConfig(url=f"http://127.0.0.1:{port}/ask", concurrency=args.concurrency,
                           timeout_s=30, max_retries=0)
        questions = [Question(question_id=f"q{i:05d}", question=f"What is the fee of plan "
                              f"{i}?", answerable=True) for i in range(args.questions)]
        wall, cpu = [], []
        for _ in range(args.repeats + 1):  # the first round warms up (imports, pool)
            system = HttpSystem(cfg, ["I don't know"])
            t0, c0 = time.perf_counter(), time.process_time()
            preds, errors, _, _ = ask_all(system, cfg, questions, 3)
            wall.append((time.perf_counter() - t0) * 1000 / len(questions))
            cpu.append((time.process_time() - c0) * 1000 / len(questions))
            system.close()
            assert not errors and len(preds) == len(questions), errors
        wall, cpu = wall[1:], cpu[1:]
        load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") \
            else ["?"]
        print(json.dumps({
            "questions": args.questions, "concurrency": args.concurrency,
            "repeats": args.repeats,
            "wall_ms_per_question": {"median": round(statistics.median(wall), 3),
                                     "all": [round(x, 3) for x in wall]},
            "client_cpu_ms_per_question": {"median": round(statistics.median(cpu), 3),
                                           "all": [round(x, 3) for x in cpu]},
            "cores": os.cpu_count(), "loadavg": " ".join(load)}, indent=2))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
