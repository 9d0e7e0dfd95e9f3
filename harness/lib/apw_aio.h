/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the harness's aio_poll() programs share (callgrind/aio_poll_cost.c,
 * loopbench/aio_loop_bench.c): their options and the AioContext they
 * run.  Include it after QEMU's headers (qemu/osdep.h, block/aio.h,
 * qapi/error.h, util/aio-posix.h).  harness/callgrind/build.py defines
 * APW_POLL_WEIGHT when the tree's aio_context_set_poll_params() takes a
 * weight.
 */
#ifndef APW_AIO_H
#define APW_AIO_H

/*
 * The value of @arg if it is "@name=VALUE", VALUE a number >= 0; LONG_MIN if
 * @arg is another option.  A bad VALUE ends the program.
 */
static inline long apw_opt_num(const char *prog, const char *arg,
                               const char *name)
{
    size_t n = strlen(name);
    char *end;
    long v;

    if (strncmp(arg, name, n) || arg[n] != '=') {
        return LONG_MIN;
    }
    v = strtol(arg + n + 1, &end, 0);
    if (*end || v < 0) {
        fprintf(stderr, "%s: bad value in %s\n", prog, arg);
        exit(2);
    }
    return v;
}

/*
 * The options both programs take: the event loop's poll parameters, its fd
 * monitor and the warm-up.  Set the defaults before apw_poll_opt().
 */
typedef struct ApwPollOpts {
    long warmup;
    long max_ns;
    long grow;
    long shrink;
    long weight;
    bool fdmon_poll;
} ApwPollOpts;

/*
 * Store @arg in @o and return true if it is one of ApwPollOpts'
 * options: --warmup=N, --max-ns=NS, --grow=G, --shrink=S, --weight=W,
 * --fdmon=poll or --fdmon=default.
 */
static inline bool apw_poll_opt(const char *prog, const char *arg,
                                ApwPollOpts *o)
{
    const struct {
        const char *name;
        long *value;
    } num[] = {
        { "--warmup", &o->warmup },
        { "--max-ns", &o->max_ns },
        { "--grow", &o->grow },
        { "--shrink", &o->shrink },
        { "--weight", &o->weight },
    };
    size_t i;
    long v;

    for (i = 0; i < ARRAY_SIZE(num); i++) {
        v = apw_opt_num(prog, arg, num[i].name);
        if (v != LONG_MIN) {
            *num[i].value = v;
            return true;
        }
    }
    if (!strcmp(arg, "--fdmon=poll") || !strcmp(arg, "--fdmon=default")) {
        o->fdmon_poll = !strcmp(arg, "--fdmon=poll");
        return true;
    }
    return false;
}

/*
 * A new AioContext, made this thread's current one, on fdmon-poll (ppoll())
 * instead of io_uring if @o->fdmon_poll, with @o's poll parameters; a weight
 * other than 0 needs the series.
 */
static inline AioContext *apw_aio_context(const char *prog,
                                          const ApwPollOpts *o)
{
    AioContext *ctx = aio_context_new(&error_abort);

    if (o->fdmon_poll) {
#ifdef CONFIG_LINUX_IO_URING
        fdmon_io_uring_destroy(ctx);
#endif
    }
    qemu_set_current_aio_context(ctx);
#ifdef APW_POLL_WEIGHT
    aio_context_set_poll_params(ctx, o->max_ns, o->grow, o->shrink, o->weight,
                                &error_abort);
#else
    if (o->weight) {
        fprintf(stderr, "%s: --weight needs the series\n", prog);
        exit(2);
    }
    aio_context_set_poll_params(ctx, o->max_ns, o->grow, o->shrink,
                                &error_abort);
#endif
    return ctx;
}

#endif /* APW_AIO_H */
