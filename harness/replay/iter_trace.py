#!/usr/bin/python3
"""Add the iteration trace to a QEMU tree: one trace event per aio_poll().

Usage: iter_trace.py SRC

Edits SRC/util/aio-posix.c and SRC/util/trace-events in place.  It is a
measuring instrument, kept out of the series, and works on every tree the
harness builds (10.2.2 and 10.0.13, unpatched and with the series): it
edits at lines that all of them share, and fails if one is missing.

Events (the 'log' trace backend writes them as text):

  aio_poll_ready ctx node polled
      before dispatch, once per handler on the ready list; polled is 1 if
      the handler has an io_poll() callback (polling could catch it)
  aio_poll_iter ctx blocking t0 t_poll t_wait cpu_poll caught bh timers
      at the end of aio_poll(): t0 when it started, t_poll when
      try_poll_mode() returned, t_wait when the fd wait returned
      (CLOCK_MONOTONIC ns; t_wait - t_poll is the blocking wait), cpu_poll
      the thread's CPU time in try_poll_mode() (CLOCK_THREAD_CPUTIME_ID: the
      polling the thread did, without the time it was preempted), caught 1
      if polling found the event, bh/timers 1 if bottom halves/timers ran

harness/replay/complete.py turns a log of these into a complete trace (every
iteration, whatever ended it) and the measured polling time and blocking
waits of the run.
"""

import sys

EDITS = [
    # (file, anchor line, text to insert, before or after the anchor)
    ("util/aio-posix.c", "qemu_get_aio_context() : ctx));\n\n",
     "    struct timespec apw_ts;\n"
     "    int64_t apw_c0, apw_c1, apw_t0, apw_t1, apw_t2;\n"
     "    bool apw_caught, apw_bh, apw_timers;\n\n"
     "    apw_t0 = get_clock();\n\n", "after"),
    ("util/aio-posix.c",
     "    timeout = blocking ? aio_compute_timeout(ctx) : 0;\n",
     "    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &apw_ts);\n"
     "    apw_c0 = apw_ts.tv_sec * 1000000000LL + apw_ts.tv_nsec;\n", "after"),
    ("util/aio-posix.c", "    assert(!(timeout && progress));\n",
     "    apw_t1 = get_clock();\n"
     "    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &apw_ts);\n"
     "    apw_c1 = apw_ts.tv_sec * 1000000000LL + apw_ts.tv_nsec;\n"
     "    apw_caught = progress;\n", "after"),
    ("util/aio-posix.c", "    aio_notify_accept(ctx);\n",
     "    apw_t2 = get_clock();\n", "after"),
    ("util/aio-posix.c", "    progress |= aio_bh_poll(ctx);\n",
     "    {\n"
     "        AioHandler *apw_node;\n"
     "\n"
     "        QLIST_FOREACH(apw_node, &ready_list, node_ready) {\n"
     "            trace_aio_poll_ready(ctx, apw_node,\n"
     "                                 apw_node->io_poll != NULL);\n"
     "        }\n"
     "    }\n", "before"),
    ("util/aio-posix.c", "    progress |= aio_bh_poll(ctx);\n",
     "    apw_bh = progress;\n", "replace:    apw_bh = aio_bh_poll(ctx);\n"
     "    progress |= apw_bh;\n"),
    ("util/aio-posix.c",
     "    progress |= timerlistgroup_run_timers(&ctx->tlg);\n\n    return progress;\n",
     None, "replace:"
     "    apw_timers = timerlistgroup_run_timers(&ctx->tlg);\n"
     "    progress |= apw_timers;\n"
     "    trace_aio_poll_iter(ctx, blocking, apw_t0, apw_t1, apw_t2,\n"
     "                        apw_c1 - apw_c0, apw_caught, apw_bh, apw_timers);\n"
     "\n    return progress;\n"),
    ("util/trace-events", "# aio-posix.c\n",
     "aio_poll_ready(void *ctx, void *node, int polled) \"ctx %p node %p polled %d\"\n"
     "aio_poll_iter(void *ctx, int blocking, int64_t t0, int64_t t_poll, "
     "int64_t t_wait, int64_t cpu_poll, int caught, int bh, int timers) "
     "\"ctx %p blocking %d t0 %\"PRId64\" t_poll %\"PRId64\" t_wait %\"PRId64\" "
     "cpu_poll %\"PRId64\" caught %d bh %d timers %d\"\n", "after"),
]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    src = sys.argv[1]
    texts = {}
    for path, anchor, text, where in EDITS:
        if path not in texts:
            with open(f"{src}/{path}") as f:
                texts[path] = f.read()
        s = texts[path]
        if "aio_poll_iter" in s and path.endswith("trace-events") and \
                where == "after":
            sys.exit(f"iter_trace.py: {src} already has the iteration trace")
        if s.count(anchor) != 1:
            sys.exit(f"iter_trace.py: {path}: {anchor!r} found "
                     f"{s.count(anchor)} times, want once")
        if where == "before":
            s = s.replace(anchor, text + anchor)
        elif where == "after":
            s = s.replace(anchor, anchor + text)
        else:
            s = s.replace(anchor, where[len("replace:"):])
        texts[path] = s
    for path, s in texts.items():
        with open(f"{src}/{path}", "w") as f:
            f.write(s)
    print(f"iter_trace.py: {src}: iteration trace added")


if __name__ == "__main__":
    main()
