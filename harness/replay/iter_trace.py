#!/usr/bin/python3
"""Add the iteration trace to a QEMU tree: one trace event per aio_poll().

Usage: iter_trace.py SRC

Edits SRC/util/aio-posix.c and SRC/util/trace-events in place.  It is a
measuring instrument, kept out of the series, and works on every tree the
harness builds (10.2.2 and 10.0.13, unpatched and with the series): it
edits at lines that all of them share, and fails if one is missing.

Events, of blocking iterations only (the 'log' trace backend writes them
as text):

  aio_poll_ready ctx node polled
      before dispatch, once per handler on the ready list; polled is 1 if
      the handler has an io_poll() callback (polling could catch it)
  aio_poll_iter ctx t0 t_poll t_wait cpu_poll slept cap poll_ns block_ns
                flags
      at the end of aio_poll(): t0 when it started, t_poll when
      try_poll_mode() returned, t_wait when the fd wait returned
      (CLOCK_MONOTONIC ns; t_wait - t_poll is the blocking wait; t_wait -
      t0 is about the block_ns that the policy then sees, the trace's own
      clock reads included), cpu_poll
      the thread's CPU time in try_poll_mode() (CLOCK_THREAD_CPUTIME_ID: the
      polling the thread did, without the time it was preempted), slept the
      thread's voluntary context switches in the fd wait (getrusage(): did
      the wait sleep), cap the most that polling could last in this
      iteration (the wait's timeout, as try_poll_mode() caps polling with
      it; 0 if the fd monitor needs a wait first; -1 for no cap), poll_ns
      the polling time the policy had set (what try_poll_mode() polls for
      before that cap), block_ns the wait that aio_poll() itself measured
      and gave the policy (0 when it measured none: poll-max-ns=0, or,
      with patches 13 and 15 of the series, a wait that could not poll;
      t_wait - t0 differs from it by the clock reads of both, tens of ns,
      which decide at a policy's growth boundary), flags: 1 polling found
      the event, 2 bottom halves ran, 4 timers ran, 8 the fd monitor needed
      a wait first (need_wait(): io_uring after an fd event, or a handler
      without io_poll()), so that no policy could poll

harness/replay/complete.py turns a log of these into a complete trace (every
iteration, whatever ended it) and the measured polling time and blocking
waits of the run.
"""

import sys

EDITS = [
    # (file, anchor line, text to insert, before or after the anchor)
    ("util/aio-posix.c", '#include "qemu/osdep.h"\n',
     "#include <sys/resource.h>\n", "after"),
    ("util/aio-posix.c", "qemu_get_aio_context() : ctx));\n\n",
     "    struct timespec apw_ts;\n"
     "    struct rusage apw_ru;\n"
     "    long apw_v1;\n"
     "    int64_t apw_c0, apw_c1, apw_t0, apw_t1, apw_t2, apw_cap, apw_pns;\n"
     "    bool apw_caught, apw_bh, apw_timers, apw_nw;\n\n"
     "    apw_t0 = get_clock();\n\n", "after"),
    ("util/aio-posix.c",
     "    timeout = blocking ? aio_compute_timeout(ctx) : 0;\n",
     "    apw_nw = ctx->fdmon_ops->need_wait(ctx);\n"
     "    apw_cap = apw_nw ? 0 : timeout;\n"
     "    apw_pns = POLL_NS;\n"
     "    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &apw_ts);\n"
     "    apw_c0 = apw_ts.tv_sec * 1000000000LL + apw_ts.tv_nsec;\n", "after"),
    ("util/aio-posix.c", "    assert(!(timeout && progress));\n",
     "    apw_t1 = get_clock();\n"
     "    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &apw_ts);\n"
     "    apw_c1 = apw_ts.tv_sec * 1000000000LL + apw_ts.tv_nsec;\n"
     "    getrusage(RUSAGE_THREAD, &apw_ru);\n"
     "    apw_v1 = apw_ru.ru_nvcsw;\n"
     "    apw_caught = progress;\n", "after"),
    ("util/aio-posix.c", "    aio_notify_accept(ctx);\n",
     "    getrusage(RUSAGE_THREAD, &apw_ru);\n"
     "    apw_t2 = get_clock();\n", "after"),
    ("util/aio-posix.c", "    progress |= aio_bh_poll(ctx);\n",
     "    if (blocking) {\n"
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
     "    if (blocking) {\n"
     "        trace_aio_poll_iter(ctx, apw_t0, apw_t1, apw_t2, apw_c1 - apw_c0,\n"
     "                            apw_ru.ru_nvcsw - apw_v1, apw_cap, apw_pns,\n"
     "                            block_ns,\n"
     "                            apw_caught | apw_bh << 1 | apw_timers << 2 |\n"
     "                            apw_nw << 3);\n"
     "    }\n"
     "\n    return progress;\n"),
    ("util/trace-events", "# aio-posix.c\n",
     "aio_poll_ready(void *ctx, void *node, int polled) \"ctx %p node %p polled %d\"\n"
     "aio_poll_iter(void *ctx, int64_t t0, int64_t t_poll, "
     "int64_t t_wait, int64_t cpu_poll, long slept, int64_t cap, "
     "int64_t poll_ns, int64_t block_ns, int flags) \"ctx %p t0 %\"PRId64\" "
     "t_poll %\"PRId64\" t_wait %\"PRId64\" cpu_poll %\"PRId64\" "
     "slept %ld cap %\"PRId64\" poll_ns %\"PRId64\" block_ns %\"PRId64\" "
     "flags %d\"\n", "after"),
]


# The polling time the policy set: one per AioContext with the series
# (ctx->poll_ns), the largest of the handlers' in 10.x (node->poll.ns), as
# try_poll_mode() takes it
POLL_NS_SERIES = "ctx->poll_ns"
POLL_NS_BASE = ("({\n"
                "        AioHandler *apw_n;\n"
                "        int64_t apw_m = 0;\n"
                "\n"
                "        QLIST_FOREACH(apw_n, &ctx->poll_aio_handlers, "
                "node_poll) {\n"
                "            apw_m = MAX(apw_m, apw_n->poll.ns);\n"
                "        }\n"
                "        apw_m;\n"
                "    })")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    src = sys.argv[1]
    with open(f"{src}/util/aio-posix.c") as f:
        poll_ns = POLL_NS_SERIES if "max_ns = qemu_soonest_timeout(*timeout, " \
            "ctx->poll_ns);" in f.read() else POLL_NS_BASE
    texts = {}
    for path, anchor, text, where in EDITS:
        if text:
            text = text.replace("POLL_NS", poll_ns)
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
