/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * aio-poll-replay: replay aio_poll() event traces through the adaptive
 * polling policies and compare them with the offline optimum
 *
 * Copyright (c) 2026 aio-poll-weight developers
 *
 * Wall-clock benchmarks of busy polling are noisy.  This tool measures a
 * polling policy exactly instead, by replaying a trace of event times
 * through a model of aio_poll() with a fake clock.  Every figure it prints
 * is an integer computed from the trace alone: the output is the same on
 * every run and every machine.
 *
 * Trace format (text, one event per line):
 *
 *     <time_ns> <handler_id>
 *
 * <time_ns> is the absolute time of the event in nanoseconds since the
 * start of the trace (>= 0), <handler_id> is the polled handler that fires,
 * 0..63.  Lines need not be sorted.  Empty lines and lines that start with
 * '#' are ignored.  Events at the same time are handled by one aio_poll()
 * iteration; a handler that appears twice at the same time fires once.
 *
 * The model of aio_poll(), the same as in tests/unit/test-aio-poll-weight.c:
 * the loop starts at time 0 with no handler in the poll list.  Each
 * iteration polls for the policy's polling time.  If the next event comes
 * within it, polling catches it and the time spent polling is the event's
 * delay; otherwise the whole polling time is wasted and the event needs a
 * blocking wait and a wakeup.  Either way the iteration blocks for
 * block_ns = the delay of the event, and then dispatches every handler with
 * an event at that time: a handler joins the poll list when it first fires,
 * and the policy adjusts.  Dispatching takes no time, the events do not
 * depend on the policy, and timers and the 7 s idle removal of poll
 * handlers are left out.
 *
 * The policies:
 *
 *   series w=N   the policy of patches 1-8 (QEMU 11.1's) with poll-weight
 *                N, replayed with a copy of the pure functions that patch
 *                2 adds to util/aio-posix.h (series_estimate_fired(),
 *                series_estimate_idle(), series_ns_update() below), since
 *                patch 9 replaces them.
 *   new w=N      (--priced only) the policy of patches 9-13, the
 *                cost-minimising one: replayed twice, in lockstep, with
 *                the pure functions of util/aio-posix.h
 *                (aio_poll_wait_len(), aio_poll_hist_add(),
 *                aio_poll_hist_best(), with the tree's
 *                AIO_POLL_WAKEUP_NS and AIO_POLL_WAKEUP_LATENCY_NS)
 *                and with the real aio_adjust_polling_time() on a real
 *                AioContext with fake handlers.  Both must agree on every
 *                polling time, or the tool fails.  A wait of a complete
 *                trace that the fd monitor kept from polling (its nw
 *                column, or a wait with a timeout of 0 that the fd
 *                monitor's wait() ran in, see parse_iter_line()) is not
 *                counted, as patch 13 has it.
 *   unpatched    QEMU 10.2.2: each handler adapts its own polling time,
 *                starting at 4 us, growing by poll-grow (0 selects 2)
 *                while block_ns is above it and below poll-max-ns,
 *                shrinking by poll-shrink (0 resets it to 0) when block_ns
 *                is above poll-max-ns; the thread polls for the largest
 *                polling time in the poll list.  A model of the code that
 *                the series replaces.
 *   oracle       offline optimal: polls exactly until the next event when
 *                that comes within poll-max-ns, and not at all otherwise.
 *                It catches every event that any policy can catch, at the
 *                least possible polling time.
 *
 * Each event that a policy catches costs at least its delay, so the least
 * polling time that catches k events is the sum of the k smallest delays:
 * the oracle's frontier.  For each policy the tool reports the events it
 * caught, those that needed a blocking wait, the time spent polling, the
 * part of it wasted on polls that caught nothing, polling time per caught
 * event, the catches it missed compared with the oracle, and its extra
 * polling time over the frontier at the same number of catches.
 *
 * Synthetic traces (synth:NAME) are generated here, with fixed seeds and a
 * PRNG of our own (splitmix64) and integer arithmetic only, so that they
 * are the same everywhere; --gen writes one in the trace format.
 *
 * --check replays the synthetic traces and fails if figures pinned below
 * got worse, so that a policy change that polls more or catches less is
 * noticed.
 *
 * --model-check checks the model of 10.2.2 against a real run: it feeds
 * the model the block_ns of each adjust_polling_time() call that a
 * recording of unpatched QEMU 10.2.2 lists, and the model must emit the
 * recording's poll_grow and poll_shrink events exactly, old and new
 * polling times alike.
 */

#include "qemu/osdep.h"
#include <getopt.h>
#include "block/aio.h"
#include "qapi/error.h"
#include "qemu/cutils.h"
#include "qemu/event_notifier.h"
#include "util/aio-posix.h"

#define MAX_HANDLERS 64

/* IOTHREAD_POLL_MAX_NS_DEFAULT in iothread.c */
#define DEFAULT_MAX_NS 32768

#define MS INT64_C(1000000)
#define US INT64_C(1000)

/*
 * The price of a blocking wakeup with fdmon-io_uring, measured on the
 * project's machine (2 vCPUs of a KVM guest) with
 * harness/wakeup/wakeup_cost.c: the waiter's and the waker's CPU over a
 * wait that finds its event there, and latency over a spinning wait
 * (means of 18000 waits; results/wakeup-cost.csv)
 */
#define DEFAULT_WAKEUP_CPU_NS 9467
#define DEFAULT_WAKEUP_LATENCY_NS 14044

/* How many frontier points --frontier writes per trace, at most */
#define FRONTIER_POINTS 256

typedef struct {
    int64_t max_ns;
    int64_t grow;
    int64_t shrink;
} Params;

/* What ended an aio_poll() iteration's wait */
typedef enum {
    END_POLLED,         /* an event of polled handlers: polling can catch it */
    END_FD,             /* an fd without io_poll(): polling cannot see it */
    END_TIMER,          /* a timer: the wait ends then, polling or not */
} IterEnd;

/* One aio_poll() iteration of a trace */
typedef struct {
    int64_t gap;        /* since the previous iteration, or since 0 */
    uint64_t fired;     /* the handlers with an event, a bit each */
    IterEnd end;
    bool woken;         /* complete traces: the recorded wait slept */
    bool pending;       /* complete traces: it did not, the event was there */
    int64_t polled;     /* complete traces: the recorded run's polling */
    int64_t cap;        /* complete traces: the most any policy could poll */
    int64_t set;        /* complete traces: the recorded policy's poll time */
    bool need_wait;     /* complete traces: no policy could poll */
    int64_t arrive;     /* complete traces: when the event of a slept wait
                           came, if the kernel's wakeup was recorded; or -1 */
    int64_t stall;      /* complete traces: held past the polling, see
                           trace_stalls() */
} Iter;

typedef struct {
    char *name;
    Iter *it;
    size_t n;
    int nh;             /* 1 + the largest handler id */
    uint64_t events;
    int64_t end;        /* time of the last event */
    bool complete;      /* one line per iteration, whatever ended it */
    uint64_t ios;       /* complete traces: the I/Os of the recorded run */
    /*
     * Complete traces recorded under 10.2.2 ('# idle-poll-ns N'): the
     * polling time of handlers that had no event in the trace, and of each
     * other one until its first.  10.2.2 adjusts a handler's time only
     * when it has an event, so theirs stays what it was, and
     * try_poll_mode() polls for at least that long.  N is the least
     * polling time that the run set in the whole trace; until then the
     * idle handlers may have held more: see idle_floor()
     */
    int64_t idle_ns;
    bool idle_known;    /* the trace has '# idle-poll-ns' */
    /* complete traces: waits taken for need_wait() ones, see parse_iter_line */
    uint64_t need_wait_inferred;
    /* complete traces: the stalls, see trace_stalls() */
    uint64_t stalls;
    int64_t stalled_ns;
    int notifier;       /* the AioContext's notifier for --idle-rule, or -1 */
} Trace;

typedef struct {
    int64_t t;
    int h;
} Event;

typedef enum {
    POLICY_ORACLE,
    POLICY_UNPATCHED,
    POLICY_SERIES,
    POLICY_NEW,         /* --priced only: patches 9-10, see new_adjust() */
} PolicyKind;

typedef struct {
    PolicyKind kind;
    int weight;         /* POLICY_SERIES only */
} Policy;

typedef struct {
    uint64_t caught;    /* events caught by polling */
    uint64_t woken;     /* events that needed a blocking wait */
    int64_t polled_ns;  /* time spent polling */
    int64_t wasted_ns;  /* of which on polls that caught nothing */
} Result;

static G_NORETURN void fail(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

static void fail(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "aio-poll-replay: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    exit(2);
}

/* Traces */

static int event_cmp(const void *a, const void *b)
{
    const Event *x = a, *y = b;

    if (x->t != y->t) {
        return x->t < y->t ? -1 : 1;
    }
    return x->h - y->h;
}

/* Sort @events and group them into iterations; takes over @name */
static Trace *trace_new(char *name, GArray *events)
{
    Trace *tr = g_new0(Trace, 1);
    Event *ev = (Event *)events->data;
    int64_t now = 0;
    size_t i;

    tr->name = name;
    qsort(ev, events->len, sizeof(Event), event_cmp);
    tr->it = g_new0(Iter, events->len ? events->len : 1);
    for (i = 0; i < events->len; i++) {
        uint64_t bit = 1ULL << ev[i].h;

        if (!tr->n || ev[i].t != now) {
            /* No cap, no recorded policy: any policy may poll up to max */
            tr->it[tr->n++] = (Iter) { .gap = ev[i].t - now, .cap = -1,
                                       .set = -1 };
            now = ev[i].t;
        }
        if (!(tr->it[tr->n - 1].fired & bit)) {
            tr->it[tr->n - 1].fired |= bit;
            tr->events++;
        }
        tr->nh = MAX(tr->nh, ev[i].h + 1);
    }
    tr->end = now;
    return tr;
}

static void trace_free(Trace *tr)
{
    g_free(tr->name);
    g_free(tr->it);
    g_free(tr);
}

/*
 * A line of a complete trace: 'i <wait_ns> <end> <woken> <handlers>', see
 * harness/replay/README.md.  Appends the iteration to @iters.
 */
static void parse_iter_line(const char *p, const char *name, unsigned lineno,
                            GArray *iters, Trace *tr)
{
    /* polled_ns, cap_ns, set_ns, nw, arrive_ns */
    long long gap, opt[5] = { 0, -1, -1, 0, -1 };
    char end, hs[512];
    int woken, n = 0, m, j;
    bool bad;
    Iter it = { 0 };

    bad = sscanf(p, "i %lld %c %d %511s %n", &gap, &end, &woken, hs, &n) != 4;
    for (j = 0; !bad && p[n] != '\0'; j++) {
        bad = j == ARRAY_SIZE(opt) ||
              sscanf(p + n, "%lld %n", &opt[j], &m) != 1 ||
              opt[j] < (j ? -1 : 0) || opt[j] > INT64_MAX / 4 ||
              (j == 3 && opt[j] > 1);
        n += bad ? 0 : m;
    }
    if (bad || gap < 0 || gap > INT64_MAX / 4 ||
        woken < 0 || woken > 2 || !strchr("pft", end)) {
        fail("%s:%u: expected 'i <wait_ns> p|f|t 0|1|2 <handlers>|- "
             "[<polled_ns> [<cap_ns> [<set_ns> [0|1 [<arrive_ns>]]]]]'",
             name, lineno);
    }
    if (opt[4] >= 0 && woken != 1) {
        fail("%s:%u: arrive_ns %lld for a wait that did not sleep", name,
             lineno, opt[4]);
    }
    if (opt[4] >= 0 && (opt[4] > gap || opt[4] < opt[0])) {
        fail("%s:%u: arrive_ns %lld outside the slept wait (%lld to %lld "
             "ns)", name, lineno, opt[4], opt[0], gap);
    }
    it.gap = gap;
    it.end = end == 'p' ? END_POLLED : end == 'f' ? END_FD : END_TIMER;
    it.woken = woken == 1;
    it.pending = woken == 0;
    it.polled = opt[0];
    it.cap = opt[1];
    it.set = opt[2];
    it.need_wait = opt[3];
    it.arrive = opt[4];
    /*
     * A wait whose timeout was 0 that found a handler ready without
     * polling: aio_poll() calls the fd monitor's wait() then only because
     * need_wait() said so.  The trace asks need_wait() before its own
     * system calls (the thread's CPU clock), and with io_uring a system call
     * runs the task work that posts completions: need_wait() has turned true
     * by the time try_poll_mode() asks it.  The polling time that the
     * recorded runs of patches 1-13 set says that they did not count these
     * waits (harness/replay/README.md).
     */
    if (j >= 4 && !it.need_wait && it.cap == 0 &&
        woken == 0 && (end == 'f' || strcmp(hs, "-"))) {
        it.need_wait = true;
        tr->need_wait_inferred++;
    }
    if (strcmp(hs, "-")) {
        g_auto(GStrv) ids = g_strsplit(hs, ",", -1);
        int i;

        for (i = 0; ids[i]; i++) {
            int64_t h;

            if (qemu_strtoi64(ids[i], NULL, 10, &h) || h < 0 ||
                h >= MAX_HANDLERS) {
                fail("%s:%u: bad handler id '%s'", name, lineno, ids[i]);
            }
            it.fired |= 1ULL << h;
            tr->nh = MAX(tr->nh, h + 1);
            tr->events++;
        }
    }
    /*
     * 'p' with no handler: bottom halves ran and no handler was dispatched.
     * Polling would have caught the aio_notify() that scheduled them (the
     * AioContext's notifier), but no policy adjusts a handler for it.
     */
    if (it.fired && it.end != END_POLLED) {
        fail("%s:%u: handlers are listed only when the end is 'p'",
             name, lineno);
    }
    tr->end += it.gap;
    g_array_append_val(iters, it);
}

/* How long the recorded run polled for in @it, by the time its policy set */
static int64_t recorded_poll(const Iter *it)
{
    return it->cap < 0 ? it->set : MIN(it->set, it->cap);
}

/*
 * Whether the recorded run's polling in @it was cut before its time and
 * the cap, and the wait then went on without sleeping: the fd monitor's
 * need_wait() turned true, or polling caught only the AioContext's
 * notifier, which sets the timeout to 0.  Neither depends on the polling
 * time: a policy that polls at least polled_ns is cut at the same point.
 * (polled_ns is never negative, so recorded_poll() is then above 0.)
 */
static bool polling_cut(const Iter *it)
{
    return it->pending && it->polled < recorded_poll(it);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

/*
 * The stalls of a complete trace.  An iteration whose recorded run polled,
 * caught nothing and still found a polled handler's event there when the
 * fd wait began, but whose polling ended later than the time its policy
 * had set, was held past that time while the event came.  On this project's
 * machine that can be a disk's completion interrupt handled on the polling
 * thread's CPU, whose 53-76 us the kernel counts as the thread's CPU time
 * (harness/wakeup/irq_charge.c), so that a policy that polls pays it; or a
 * preemption, which the kernel does not count.  The stall is the
 * wall-clock time from aio_poll()'s start to the end of polling, less the
 * polling time set and less the median of that time over the iterations
 * that did not poll (clock reads and checks); the same as trace_stalls()
 * of harness/replay/evidence.py.  Traces without the
 * recorded polling and set times have none.
 */
/*
 * --no-stalls: complete traces are read without their stalls, nor the
 * catches after the polling time (priced_wait())
 */
static bool stalls = true;

/*
 * --timeout0-rule: the policy of patches 9-13 also leaves out of its
 * histogram the waits whose timeout was 0 (cap_ns 0 in a complete trace:
 * a bottom half or a timer was due, or aio_poll() was not blocking).  Such
 * a wait can neither poll nor sleep, so no polling time changes its cost;
 * patches 1-13 count it, as a short wait that polling would have ended
 * without a wakeup.  Patch 15 of the series; not the default, because
 * the committed recordings ran patches 1-13.
 */
static bool timeout0_rule;

/*
 * --cut-rule: the policy of patches 9-15 also leaves out of its histogram
 * the waits whose polling ended before its time without progress: the fd
 * monitor's need_wait() became true, or polling caught only aio_notify()
 * (the AioContext's notifier, which run_poll_handlers_once() does not count
 * as progress: it sets the timeout to 0, and the wait then only checks
 * for events, or skips the fd wait).  aio_poll() can tell such a wait at
 * no cost.  In a complete trace recorded under the series, its event was
 * there when the fd wait began (woken 0, not caught) and the recorded
 * polling ended before both the policy's time and the cap: it was cut at
 * polled_ns, and a replayed policy that polls longer is cut there too.
 * Not a patch.
 *
 * --pending-rule: every wait that neither slept nor ended by polling
 * (woken 0, not caught) is left out: its event needed no wakeup, whatever
 * the polling time, as the replay prices it.  aio_poll() cannot tell all
 * of them; a bound on what counting fewer waits could do.
 */
static bool cut_rule;

static bool pending_rule;

/*
 * --idle-rule: the policy of patches 9-15 also leaves out of its histogram
 * the waits in which nothing ran, no handler and no bottom half, while no
 * timer was due: in a complete trace end 't' with no cap, or a wait whose
 * only ready handler is the AioContext's notifier (--notifier H: its id in
 * the trace, which the trace does not name), whose aio_notify() does not
 * count as progress.  linux-aio schedules its completion bottom half and
 * cancels it again in every qemu_laio_process_completions(), which leaves
 * such an aio_notify() behind; aio_poll() can tell such a wait (no
 * progress, no timeout) at no cost.  Patch 16 of the series; not the
 * default, because the committed recordings ran patches 1-15.
 */
static bool idle_rule;
#define NOTIFIER_AUTO (-2)      /* --notifier auto: trace_notifier() */
static int notifier_id = -1;    /* --notifier: -1 none */

/*
 * --notifier auto: the handler that is the AioContext's notifier in @tr,
 * or -1: the one that ends alone most of the waits that neither slept nor
 * ended by polling, at least one in a hundred iterations, and ends more
 * than ten times as many of them as it ends waits that slept (an
 * aio_notify() made before the wait keeps it from sleeping; the other
 * handlers' events mostly come in waits that sleep)
 */
static int trace_notifier(const Trace *tr)
{
    uint64_t lone[64] = { 0 }, slept[64] = { 0 };
    int h, best = -1;
    size_t i;

    for (i = 0; i < tr->n; i++) {
        const Iter *it = &tr->it[i];

        for (h = 0; h < 64; h++) {
            if (!(it->fired & (1ULL << h))) {
                continue;
            }
            if (it->woken) {
                slept[h]++;
            } else if (it->pending && it->end == END_POLLED &&
                       it->fired == 1ULL << h) {
                lone[h]++;
            }
        }
    }
    for (h = 0; h < 64; h++) {
        if (lone[h] * 100 >= tr->n && lone[h] > 10 * slept[h] &&
            (best < 0 || lone[h] > lone[best])) {
            best = h;
        }
    }
    return best;
}

/*
 * Whether the policy of the series (POLICY_NEW), polling for @poll_ns,
 * leaves @it out of its histogram by one of the rules above that it is
 * given (need_wait() aside, which every policy's replay honours)
 */
static bool new_leaves_out(const Trace *tr, const Iter *it, int64_t poll_ns)
{
    if (timeout0_rule && it->cap == 0) {
        return true;
    }
    if (pending_rule && it->pending) {
        return true;
    }
    if (cut_rule && polling_cut(it) && it->end == END_POLLED &&
        poll_ns > it->polled) {
        return true;
    }
    return idle_rule && it->cap < 0 &&
           (it->end == END_TIMER ||
            (tr->notifier >= 0 && it->end == END_POLLED &&
             it->fired == 1ULL << tr->notifier));
}

/*
 * An event that the recorded run slept for arrives after the replay's end
 * of the recorded polling time (recorded_poll() + the price's entry_ns),
 * not only after the recorded run's own polling (polled, its wall clock):
 * a policy that polls no longer than the recorded run did must not catch
 * it.  Until 2026-12-04 the arrival was only kept after polled; where the
 * price's latency is longer than the run's wakeups took (gap - lat_ns
 * below polled) that put it at polled, which a policy polling as long as
 * the recorded run reaches whenever the run entered and left poll mode
 * faster than entry_ns, so the replay of the run's own policy caught
 * events that the run slept for (results/evidence-rounds-2/).
 * --no-after-recorded replays as before.
 */
static bool after_recorded = true;

/*
 * --policy-wakeup-cpu, --policy-wakeup-latency: the policy of patches 9-13
 * with these in place of the tree's AIO_POLL_WAKEUP_NS and
 * AIO_POLL_WAKEUP_LATENCY_NS, as a build calibrated to the host that
 * recorded the trace would have them.  Where they differ from the tree's,
 * the real aio_adjust_polling_time(), compiled with the tree's, is not run
 * beside the pure functions.  Not a patch of the series: what such a
 * calibration would change, in the model.
 */
static int64_t policy_wakeup_ns = AIO_POLL_WAKEUP_NS;
static int64_t policy_latency_ns = AIO_POLL_WAKEUP_LATENCY_NS;

static void trace_stalls(Trace *tr)
{
    g_autofree int64_t *base = g_new(int64_t, tr->n);
    size_t i, n = 0;
    int64_t median;

    for (i = 0; i < tr->n; i++) {
        if (tr->it[i].set >= 0 && recorded_poll(&tr->it[i]) == 0) {
            base[n++] = tr->it[i].polled;
        }
    }
    if (n) {
        qsort(base, n, sizeof(*base), cmp_i64);
    }
    median = n ? base[n / 2] : 0;
    for (i = 0; i < tr->n; i++) {
        Iter *it = &tr->it[i];
        int64_t p = recorded_poll(it);

        if (it->set >= 0 && it->end == END_POLLED && it->pending && p > 0 &&
            it->polled - median > p) {
            it->stall = it->polled - median - p;
            tr->stalls++;
            tr->stalled_ns += it->stall;
        }
    }
}

static Trace *trace_parse(FILE *f, const char *name)
{
    GArray *events = g_array_new(false, false, sizeof(Event));
    GArray *iters = g_array_new(false, false, sizeof(Iter));
    Trace *tr, complete = { 0 };
    char *line = NULL;
    size_t size = 0;
    unsigned lineno = 0;

    while (getline(&line, &size, f) >= 0) {
        const char *p = line + strspn(line, " \t");
        Event e;
        long long t;
        int h, end = 0;

        lineno++;
        g_strchomp(line);
        if (sscanf(p, "# ios %lld", &t) == 1 && t >= 0) {
            complete.ios = t;
        }
        if (sscanf(p, "# idle-poll-ns %lld", &t) == 1 && t >= 0) {
            complete.idle_ns = t;
            complete.idle_known = true;
        }
        if (*p == '#' || *p == '\0') {
            continue;
        }
        if (*p == 'i') {
            if (events->len) {
                fail("%s:%u: an iteration line in an event trace", name,
                     lineno);
            }
            parse_iter_line(p, name, lineno, iters, &complete);
            continue;
        }
        if (iters->len) {
            fail("%s:%u: an event line in a complete trace", name, lineno);
        }
        if (sscanf(p, "%lld %d %n", &t, &h, &end) != 2 || p[end] != '\0') {
            fail("%s:%u: expected '<time_ns> <handler_id>'", name, lineno);
        }
        if (t < 0 || t > INT64_MAX / 4) {
            fail("%s:%u: time %lld out of range", name, lineno, t);
        }
        if (h < 0 || h >= MAX_HANDLERS) {
            fail("%s:%u: handler id %d not in 0..%d", name, lineno, h,
                 MAX_HANDLERS - 1);
        }
        e = (Event) { .t = t, .h = h };
        g_array_append_val(events, e);
    }
    if (ferror(f)) {
        fail("%s: read error", name);
    }
    free(line);
    if (iters->len) {
        tr = g_new0(Trace, 1);
        *tr = complete;
        tr->name = g_strdup(name);
        tr->n = iters->len;
        tr->it = (Iter *)g_array_free(iters, false);
        tr->complete = true;
        if (stalls) {
            trace_stalls(tr);
        }
        tr->notifier = notifier_id == NOTIFIER_AUTO ? trace_notifier(tr)
                                                    : notifier_id;
        g_array_free(events, true);
        return tr;
    }
    g_array_free(iters, true);
    if (!events->len) {
        fail("%s: no events", name);
    }
    tr = trace_new(g_strdup(name), events);
    tr->notifier = -1;
    g_array_free(events, true);
    return tr;
}

/* A file, or a gzip-compressed one if its name ends in .gz */
static Trace *trace_load(const char *path)
{
    bool gz = g_str_has_suffix(path, ".gz");
    g_autofree char *quoted = g_shell_quote(path);
    g_autofree char *cmd = g_strdup_printf("gzip -dc %s", quoted);
    FILE *f = gz ? popen(cmd, "r") : fopen(path, "r");
    Trace *tr;

    if (!f) {
        fail("%s: %s", path, strerror(errno));
    }
    tr = trace_parse(f, path);
    if (gz ? pclose(f) != 0 : fclose(f) != 0) {
        fail("%s: could not be read whole", path);
    }
    return tr;
}

/* Write @tr in the trace format */
static void trace_write(FILE *f, const Trace *tr)
{
    int64_t now = 0;
    size_t i;
    int h;

    fprintf(f, "# aio-poll-replay trace: <time_ns> <handler_id>\n");
    fprintf(f, "# %s: %zu iterations, %" PRIu64 " events, %d handler(s)\n",
            tr->name, tr->n, tr->events, tr->nh);
    for (i = 0; i < tr->n; i++) {
        now += tr->it[i].gap;
        for (h = 0; h < MAX_HANDLERS; h++) {
            if (tr->it[i].fired & (1ULL << h)) {
                fprintf(f, "%" PRId64 " %d\n", now, h);
            }
        }
    }
}

/* Synthetic traces */

typedef struct {
    uint64_t s;
} Rng;

/* splitmix64, by Sebastiano Vigna (public domain) */
static uint64_t rng_next(Rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi] */
static int64_t rng_range(Rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/*
 * Exponentially distributed with mean @mean, in ticks of EXP_TICK_NS: the
 * number of Bernoulli trials until the first success, which needs no
 * floating point.
 */
#define EXP_TICK_NS 32

static int64_t rng_exp(Rng *r, int64_t mean)
{
    uint64_t p = UINT64_MAX / (uint64_t)mean * EXP_TICK_NS;
    int64_t t = EXP_TICK_NS;

    while (rng_next(r) >= p) {
        t += EXP_TICK_NS;
    }
    return t;
}

static void add_event(GArray *events, int64_t t, int h)
{
    Event e = { .t = t, .h = h };

    g_array_append_val(events, e);
}

/* One handler every 12 us */
static void gen_fixed(GArray *ev)
{
    int64_t t;

    for (t = 12 * US; t <= 240 * MS; t += 12 * US) {
        add_event(ev, t, 0);
    }
}

/*
 * A fast handler, every 6..10 us, beside a slow one, every 150..250 us,
 * which is beyond poll-max-ns
 */
static void gen_bimodal(GArray *ev)
{
    Rng r = { 0x61696f2d62696d6fULL };
    int64_t t;

    for (t = 0; (t += rng_range(&r, 6 * US, 10 * US)) <= 160 * MS;) {
        add_event(ev, t, 0);
    }
    for (t = 0; (t += rng_range(&r, 150 * US, 250 * US)) <= 160 * MS;) {
        add_event(ev, t, 1);
    }
}

/* Two handlers with Poisson arrivals, 30 and 60 us apart on average */
static void gen_poisson(GArray *ev)
{
    Rng r = { 0x61696f2d706f6973ULL };
    int64_t t;

    for (t = 0; (t += rng_exp(&r, 30 * US)) <= 400 * MS;) {
        add_event(ev, t, 0);
    }
    for (t = 0; (t += rng_exp(&r, 60 * US)) <= 400 * MS;) {
        add_event(ev, t, 1);
    }
}

/*
 * Bursts: one handler is on for 1..3 ms, with Poisson arrivals 5 us apart
 * on average, then off for 2..4 ms; another fires every 400..1000 us.
 */
static void gen_onoff(GArray *ev)
{
    Rng r = { 0x61696f2d6f6e6f66ULL };
    int64_t t = 0;

    while (t <= 250 * MS) {
        int64_t on_end = t + rng_range(&r, 1 * MS, 3 * MS);

        while ((t += rng_exp(&r, 5 * US)) < on_end) {
            add_event(ev, t, 0);
        }
        t = on_end + rng_range(&r, 2 * MS, 4 * MS);
    }
    for (t = 0; (t += rng_range(&r, 400 * US, 1000 * US)) <= 250 * MS;) {
        add_event(ev, t, 1);
    }
}

/*
 * Adversarial for a threshold at poll-max-ns: gaps alternate between just
 * below it (30 us) and just above it (36 us)
 */
static void gen_alternate(GArray *ev)
{
    int64_t t = 0;
    int i;

    for (i = 0; i < 20000; i++) {
        t += i % 2 ? 36 * US : 30 * US;
        add_event(ev, t, 0);
    }
}

/*
 * Adversarial for a learned distribution: the regime changes every 64
 * events, between Poisson gaps 3 us apart on average and 60 us apart
 */
static void gen_regime(GArray *ev)
{
    Rng r = { 0x61696f2d72656769ULL };
    int64_t t = 0;
    int i;

    for (i = 0; i < 20000; i++) {
        t += rng_exp(&r, (i / 64) % 2 ? 60 * US : 3 * US);
        add_event(ev, t, 0);
    }
}

/* test_steady() of tests/unit/test-aio-poll-weight.c: 100 events 10 us apart */
static void gen_steady(GArray *ev)
{
    int i;

    for (i = 1; i <= 100; i++) {
        add_event(ev, i * 10 * US, 0);
    }
}

static const struct {
    const char *name;
    void (*gen)(GArray *events);
    bool in_default_set;
    const char *help;
} synth[] = {
    { "fixed", gen_fixed, true, "one handler every 12 us" },
    { "bimodal", gen_bimodal, true,
      "fast handler every 6..10 us, slow one every 150..250 us" },
    { "poisson", gen_poisson, true,
      "two handlers, Poisson arrivals 30 and 60 us apart on average" },
    { "onoff", gen_onoff, true,
      "bursts of 1..3 ms (5 us apart) with 2..4 ms pauses, plus a handler "
      "every 400..1000 us" },
    { "alternate", gen_alternate, false,
      "gaps alternating 30 and 36 us, around poll-max-ns" },
    { "regime", gen_regime, false,
      "Poisson gaps, 3 us or 60 us apart on average, switching every 64" },
    { "steady", gen_steady, false,
      "100 events 10 us apart, test_steady() of test-aio-poll-weight" },
};

static Trace *trace_synth(const char *name)
{
    GArray *events;
    Trace *tr;
    size_t i;

    for (i = 0; i < ARRAY_SIZE(synth); i++) {
        if (!strcmp(synth[i].name, name)) {
            break;
        }
    }
    if (i == ARRAY_SIZE(synth)) {
        fail("no synthetic trace '%s' (--help lists them)", name);
    }
    events = g_array_new(false, false, sizeof(Event));
    synth[i].gen(events);
    tr = trace_new(g_strdup_printf("synth:%s", name), events);
    g_array_free(events, true);
    return tr;
}

static Trace *trace_open(const char *arg)
{
    if (g_str_has_prefix(arg, "synth:")) {
        return trace_synth(arg + strlen("synth:"));
    }
    return trace_load(arg);
}

/* The policies */

/* The trace event that adjust_polling_time() of QEMU 10.2.2 emits */
typedef enum {
    UNPATCHED_KEEP,     /* none */
    UNPATCHED_SHRINK,   /* poll_shrink */
    UNPATCHED_GROW,     /* poll_grow */
} UnpatchedStep;

/*
 * adjust_polling_time() of QEMU 10.2.2, for one handler's polling time;
 * *@step tells which trace event it emits.  --model-check compares it with
 * a recording of the real one.
 */
static int64_t unpatched_adjust(int64_t ns, int64_t block_ns,
                                const Params *p, UnpatchedStep *step)
{
    *step = UNPATCHED_KEEP;
    if (block_ns <= ns) {
        /* This is the sweet spot, no adjustment needed */
    } else if (block_ns > p->max_ns) {
        /* We'd have to poll for too long, poll less */
        ns = p->shrink ? ns / p->shrink : 0;
        *step = UNPATCHED_SHRINK;
    } else if (ns < p->max_ns && block_ns < p->max_ns) {
        /* There is room to grow, poll longer */
        int64_t grow = p->grow ? p->grow : 2;

        ns = ns ? ns * grow : 4000; /* start polling at 4 microseconds */
        if (ns > p->max_ns) {
            ns = p->max_ns;
        }
        *step = UNPATCHED_GROW;
    }
    return ns;
}

static void fake_io_read(EventNotifier *e)
{
    g_assert_not_reached(); /* the model dispatches, not aio_poll() */
}

static bool fake_io_poll(void *opaque)
{
    g_assert_not_reached();
}

static void fake_io_poll_ready(EventNotifier *e)
{
    g_assert_not_reached();
}

/*
 * The pure functions of util/aio-posix.h in patches 2-8 (QEMU 11.1's
 * policy), which patch 9 replaces: copied here so that the replay keeps
 * modelling the series' policy against the whole series' tree.
 */
static int64_t series_estimate_fired(int64_t est, int64_t block_ns,
                                     int64_t max_ns, int weight)
{
    /* Both terms are below 2^63, so the unsigned sum cannot wrap */
    uint64_t e = est ? (uint64_t)est - ((uint64_t)est >> weight) +
                       ((uint64_t)block_ns >> weight)
                     : (uint64_t)block_ns;

    return e < (uint64_t)max_ns ? e : 0;
}

static int64_t series_estimate_idle(int64_t est, int64_t block_ns,
                                    int64_t max_ns)
{
    return est && block_ns < max_ns - est ? est + block_ns : 0;
}

static int64_t series_ns_update(int64_t poll_ns, int64_t target,
                                int64_t max_ns, int64_t grow, int64_t shrink)
{
    int64_t ns;

    if (target > poll_ns) {
        if (__builtin_mul_overflow(poll_ns, grow, &ns) || ns > max_ns) {
            ns = max_ns;
        }
        return MIN(MAX(ns, target), max_ns);
    }
    if (target == 0 ||
        (!__builtin_mul_overflow(target + 1, shrink, &ns) && ns <= poll_ns)) {
        return poll_ns / shrink;
    }
    return poll_ns;
}

/*
 * --context-rule K: the policy of patches 9-13 with K histograms in place of
 * one, for the waits that come 0, 1, ..., K - 1 or more waits after the last
 * one longer than a wakeup's CPU (AIO_POLL_WAKEUP_NS, as the policy counts
 * the waits); each wait polls for the best time of its own class's
 * histogram.  Where a long wait (a sleep) is followed by a few short ones in
 * a pattern, as an NBD server's are when a disk's completion brings the
 * client's next request, each position learns its own polling time.  Not
 * a patch of the series: the online counterpart of clairvoyant-since-long
 * (--clairvoyant), in the model.  0 (the default): one histogram.
 */
#define CONTEXT_CLASSES_MAX 16
static int context_classes;

/*
 * --policy-sees-arrivals: the policy of patches 9-13 learns when the event
 * of each wait that it slept for came (the trace's arrival), as though
 * the thread knew when the kernel woke it, instead of the wait's end less
 * AIO_POLL_WAKEUP_LATENCY_NS.  What a policy could do with that knowledge,
 * in the model; no IOThread has it.
 */
static bool policy_sees_arrivals;

/*
 * --class-report: with --context-rule, per class of clairvoyant-since-long,
 * what the online position rule (the last policy "new" replayed on the
 * trace) did on the waits of that class beside the best fixed polling time
 * in hindsight for them, to stderr.  A diagnostic: where the online rule
 * loses against its clairvoyant counterpart.
 */
static bool class_report;

/* What the online rule did in each iteration, for --class-report */
typedef struct {
    int since;              /* its class when it chose the polling time */
    int64_t poll_ns;        /* the polling time it chose */
    int64_t polled_ns;      /* what the wait cost it */
    uint64_t wakeups;
} ClassStep;

static ClassStep *class_steps;

/* The state of one replay */
typedef struct {
    const Params *p;
    Policy pol;
    int nh;
    uint64_t in_list;               /* handlers in the poll list */
    int64_t ns[MAX_HANDLERS];       /* estimate or own polling time */
    int64_t poll_ns;                /* POLICY_SERIES, POLICY_NEW: poll_ns */
    int64_t idle_ns;                /* POLICY_UNPATCHED: see Trace */

    /* POLICY_NEW */
    AioPollHistogram hist;
    /* POLICY_NEW with --context-rule: one per class, and the next class */
    AioPollHistogram context[CONTEXT_CLASSES_MAX];
    int since;
    uint64_t seen[CONTEXT_CLASSES_MAX];     /* --explore: waits per class */
    bool exploring;                         /* --explore: this wait */
    /* --bandit: per class and time, the cost seen and how often played */
    int64_t arm_cost[CONTEXT_CLASSES_MAX][AIO_POLL_BINS + 1];
    uint64_t arm_plays[CONTEXT_CLASSES_MAX][AIO_POLL_BINS + 1];
    int arm;                                /* --bandit: this wait's time */
    int next_arm[CONTEXT_CLASSES_MAX];      /* --bandit: explored last */
    int fd_share[CONTEXT_CLASSES_MAX];      /* --bandit-hybrid, of 1024 */
    bool ended_fd;                          /* this wait: an fd's event */

    /* POLICY_NEW: the real aio_adjust_polling_time(), in lockstep */
    AioContext *ctx;
    EventNotifier e[MAX_HANDLERS];
    AioHandler *node[MAX_HANDLERS];
} Sim;

static void sim_init(Sim *s, const Params *p, const Policy *pol, int nh)
{
    int h;

    *s = (Sim) { .p = p, .pol = *pol, .nh = nh };
    if (pol->kind != POLICY_NEW) {
        return;
    }

    s->ctx = aio_context_new(&error_abort);
    aio_context_set_poll_params(s->ctx, p->max_ns, p->grow, p->shrink,
                                pol->weight, &error_abort);
    for (h = 0; h < nh; h++) {
        AioHandler *node;

        event_notifier_init(&s->e[h], false);
        aio_set_event_notifier(s->ctx, &s->e[h], fake_io_read, fake_io_poll,
                               fake_io_poll_ready);
        QLIST_FOREACH(node, &s->ctx->aio_handlers, node) {
            if (node->opaque == &s->e[h]) {
                s->node[h] = node;
            }
        }
        assert(s->node[h]);
    }
}

static void sim_cleanup(Sim *s)
{
    int h;

    if (!s->ctx) {
        return;
    }
    for (h = 0; h < s->nh; h++) {
        QLIST_SAFE_REMOVE(s->node[h], node_poll);
        aio_set_event_notifier(s->ctx, &s->e[h], NULL, NULL, NULL);
        event_notifier_cleanup(&s->e[h]);
    }
    aio_context_unref(s->ctx);
}

/* How long the next iteration polls */
static int64_t sim_poll_ns(Sim *s)
{
    int64_t ns = 0;
    int h;

    switch (s->pol.kind) {
    case POLICY_SERIES:
    case POLICY_NEW:
        return s->in_list ? s->poll_ns : 0;
    case POLICY_UNPATCHED:
        /* try_poll_mode() of 10.2.2 */
        ns = s->idle_ns;
        for (h = 0; h < s->nh; h++) {
            if (s->in_list & (1ULL << h)) {
                ns = MAX(ns, s->ns[h]);
            }
        }
        return ns;
    default:
        g_assert_not_reached();
    }
}

/*
 * The polling time that the policy has set, before try_poll_mode() caps it
 * or skips polling with no handler in the poll list: what a complete
 * trace's set_ns column recorded
 */
static int64_t sim_set_ns(Sim *s)
{
    return s->pol.kind == POLICY_UNPATCHED ? sim_poll_ns(s) : s->poll_ns;
}

/* aio_adjust_polling_time() of patches 2-8, on the Sim's state */
static void series_adjust(Sim *s, uint64_t fired, int64_t block_ns)
{
    const Params *p = s->p;
    int weight = s->pol.weight ? s->pol.weight : AIO_POLL_WEIGHT_DEFAULT;
    int64_t target = 0;
    bool any = false;
    int h;

    for (h = 0; h < s->nh; h++) {
        if (!(s->in_list & (1ULL << h))) {
            continue;
        }
        if (fired & (1ULL << h)) {
            s->ns[h] = series_estimate_fired(s->ns[h], block_ns, p->max_ns,
                                             weight);
            target = MAX(target, s->ns[h]);
            any = true;
        } else {
            s->ns[h] = series_estimate_idle(s->ns[h], block_ns, p->max_ns);
        }
    }
    if (any) {
        s->poll_ns = series_ns_update(s->poll_ns, target, p->max_ns,
                                      p->grow ? p->grow
                                              : AIO_POLL_GROW_DEFAULT,
                                      p->shrink ? p->shrink
                                                : AIO_POLL_SHRINK_DEFAULT);
    }
}

/*
 * --len-clamp: a wait that polled for all of its polling time and then found
 * its event ready (it returned within a wakeup's latency of the end of
 * polling) counts as ending within the polling time, not after it: polling
 * that long cost it no wakeup.  An experiment, not in the series.
 */
static bool len_clamp;

/*
 * --explore K: with --context-rule, every K-th wait of each class polls for
 * 0 whatever its histogram says, and only those waits are counted: the
 * histograms see the classes' waits as they come, not through the polling
 * that the rule chose (a wait that polled through the event of an fd
 * without io_poll() cannot tell when it came).  An experiment, not a patch.
 */
static int explore_every;

/*
 * --fd-polled: every fd event as if its fd had io_poll() in handler 0's
 * place: polling that reaches it ends the wait there, and the policies see
 * handler 0 fire.  What an io_poll() for such an fd (an NBD server's
 * socket) would buy, in the model; not in QEMU.
 */
static bool fd_polled;

/* How long the policy counts a wait: aio_poll_wait_len(), and --len-clamp */
static int64_t policy_len(const Sim *s, int64_t block_ns, bool slept)
{
    int64_t len = aio_poll_wait_len(s->poll_ns, block_ns, slept,
                                    policy_latency_ns);

    if (len_clamp && slept && s->poll_ns &&
        block_ns - s->poll_ns <= policy_latency_ns) {
        len = MIN(len, s->poll_ns);
    }
    return len;
}

/*
 * --bandit K: with --context-rule, each class chooses among 0 and the
 * histogram's bin edges by the cost that each time was seen to have when
 * it was played (a moving average, 1/2^poll-weight per wait), not by a
 * histogram of wait lengths: every K-th wait of a class plays the times in
 * turn, the others the cheapest so far.  The cost of a wait is what the
 * thread can tell: the time it polled, and a wakeup's CPU if it slept,
 * that is if the wait ended later than a wakeup's latency after polling
 * stopped (a wait that polled through an fd's event and then found the fd
 * ready ends at once).  It needs no event times: that is what an IOThread
 * does not have for an fd without io_poll().  An experiment, not a patch.
 */
static int bandit_every;
/*
 * --bandit-hybrid: a class whose waits an fd without io_poll() ended less
 * than half of the time (a moving average, 1/8 per wait) polls for the
 * best time of one histogram, the policy's, which leaves out the waits
 * that such an fd ended (it cannot tell when their events came); the
 * others as --bandit.  Where no such fd ends a wait, the policy of
 * patches 9-15 exactly
 */
static bool bandit_hybrid;
/*
 * --bandit-count-all: with --bandit-hybrid, the one histogram counts the
 * waits that an fd without io_poll() ended too, as the policy of patches
 * 9-15 does: then every position that such an fd does not mostly end
 * polls for the time that patches 9-15 would choose
 */
static bool bandit_count_all;
/*
 * --bandit-wakeup-cpu NS: --bandit's price of a wakeup, which also tells a
 * long wait (the policy's, AIO_POLL_WAKEUP_NS, by default)
 */
static int64_t bandit_wakeup_ns = -1;
/* --bandit-max NS: only the times up to NS (default all) */
static int64_t bandit_max_ns = INT64_MAX;
/*
 * --bandit-near PCT: explore only the times whose cost so far is within PCT
 * percent of the cheapest's (0, the default: all)
 */
static int64_t bandit_near;
#define BANDIT_ARMS (AIO_POLL_BINS + 1)

static int64_t bandit_arm_ns(const Sim *s, int k)
{
    return k ? s->p->max_ns >> (AIO_POLL_BINS - k) : 0;
}

/* What the wait just ended cost, as the thread can tell */
static int64_t bandit_cost(const Sim *s, int64_t block_ns, bool slept)
{
    int64_t poll_ns = s->poll_ns;

    if (!slept) {
        return MIN(block_ns, poll_ns);      /* polling caught the event */
    }
    return poll_ns + (block_ns - poll_ns > policy_latency_ns / 2 ?
                      bandit_wakeup_ns : 0);
}

static void bandit_adjust(Sim *s, uint64_t fired, int64_t block_ns,
                          bool slept, bool counted, int weight)
{
    int64_t len = policy_len(s, block_ns, slept);
    int c = s->since, k, best;

    if (bandit_hybrid) {
        /* which waits of this class an fd without io_poll() ended */
        s->fd_share[c] += ((s->ended_fd ? 1024 : 0) - s->fd_share[c]) / 8;
        if (counted && (bandit_count_all || !s->ended_fd)) {
            aio_poll_hist_add(&s->hist, len, fired != 0, s->p->max_ns,
                              weight);
        }
    }
    if (counted && s->arm >= 0) {
        int64_t cost = bandit_cost(s, block_ns, slept);
        int64_t *m = &s->arm_cost[c][s->arm];

        if (s->arm_plays[c][s->arm]++) {
            *m += (cost - *m) / (1 << weight);
        } else {
            *m = cost;
        }
    }
    c = s->since = len > bandit_wakeup_ns ? 0 :
                   MIN(s->since + 1, context_classes - 1);
    if (bandit_hybrid && s->fd_share[c] < 512) {
        /* mostly polled handlers' events: the policy's one histogram */
        s->poll_ns = aio_poll_hist_best(&s->hist, s->p->max_ns,
                                        policy_wakeup_ns);
        for (k = 0; k < BANDIT_ARMS; k++) {
            if (bandit_arm_ns(s, k) == s->poll_ns) {
                break;
            }
        }
        s->arm = k < BANDIT_ARMS ? k : -1;     /* -1: none of the times */
        return;
    }
    best = 0;
    for (k = 0; k < BANDIT_ARMS; k++) {
        if (bandit_arm_ns(s, k) > bandit_max_ns) {
            break;
        }
        if (!s->arm_plays[c][k]) {
            best = k;       /* each time played once first */
            break;
        }
        if (s->arm_cost[c][k] < s->arm_cost[c][best]) {
            best = k;
        }
    }
    if (s->arm_plays[c][best] && ++s->seen[c] % bandit_every == 0) {
        /* explore: the next time in turn among those near the best */
        int64_t lim = bandit_near ? s->arm_cost[c][best] * bandit_near / 100
                                  : INT64_MAX;

        for (k = 0; k < BANDIT_ARMS; k++) {
            int j = (s->next_arm[c] + 1 + k) % BANDIT_ARMS;

            if (bandit_arm_ns(s, j) <= bandit_max_ns &&
                s->arm_cost[c][j] <= lim) {
                best = s->next_arm[c] = j;
                break;
            }
        }
    }
    s->arm = best;
    s->poll_ns = bandit_arm_ns(s, best);
}

/*
 * The policy of patches 9-13 with the pure functions of util/aio-posix.h, and
 * the same with the real aio_adjust_polling_time(); both must agree.  A wait
 * that is not @counted (the fd monitor kept it from polling) only clears
 * poll_fired, as aio_poll() does since patch 13.
 */
static void new_adjust(Sim *s, uint64_t fired, int64_t block_ns, bool slept,
                       bool counted, size_t iter)
{
    AioContext *ctx = s->ctx;
    int weight = s->pol.weight ? s->pol.weight : AIO_POLL_WEIGHT_DEFAULT;
    int h;

    if (bandit_every) {
        bandit_adjust(s, fired, block_ns, slept, counted, weight);
        return;     /* the real one has one histogram */
    }
    if (context_classes) {
        int64_t len = policy_len(s, block_ns, slept);

        if (counted && (!explore_every || s->exploring)) {
            aio_poll_hist_add(&s->context[s->since], len, fired != 0,
                              s->p->max_ns, weight);
        }
        s->since = len > policy_wakeup_ns ? 0 :
                   MIN(s->since + 1, context_classes - 1);
        s->poll_ns = aio_poll_hist_best(&s->context[s->since], s->p->max_ns,
                                        policy_wakeup_ns);
        s->exploring = explore_every &&
                       ++s->seen[s->since] % explore_every == 0;
        if (s->exploring) {
            s->poll_ns = 0;
        }
        return;     /* the real one has one histogram */
    }
    if (counted) {
        aio_poll_hist_add(&s->hist, policy_len(s, block_ns, slept),
                          fired != 0, s->p->max_ns, weight);
        s->poll_ns = aio_poll_hist_best(&s->hist, s->p->max_ns,
                                        policy_wakeup_ns);
    }
    if (policy_wakeup_ns != AIO_POLL_WAKEUP_NS ||
        policy_latency_ns != AIO_POLL_WAKEUP_LATENCY_NS || len_clamp) {
        return;     /* the real one has the tree's constants */
    }

    for (h = 0; h < s->nh; h++) {
        AioHandler *node = s->node[h];

        if (fired & (1ULL << h)) {
            /* What aio_dispatch_handler() and its caller do */
            if (!QLIST_IS_INSERTED(node, node_poll)) {
                QLIST_INSERT_HEAD(&ctx->poll_aio_handlers, node, node_poll);
            }
            ctx->poll_fired = true;
        }
    }

    if (!counted) {
        ctx->poll_fired = false;
        return;
    }
    qemu_lockcnt_inc(&ctx->list_lock);
    aio_adjust_polling_time(ctx, s->p->max_ns, block_ns, slept);
    qemu_lockcnt_dec(&ctx->list_lock);

    if (ctx->poll_ns != s->poll_ns) {
        fail("new w=%d, iteration %zu: aio_adjust_polling_time() set "
             "poll_ns %" PRId64 ", the replay %" PRId64, s->pol.weight, iter,
             ctx->poll_ns, s->poll_ns);
    }
}

/*
 * After an iteration that blocked for @block_ns, with @fired handlers; @slept
 * as aio_poll() tells the policy of patches 9-13 (priced_wait()), and
 * @need_wait if the fd monitor did not let the iteration poll
 */
static void sim_adjust(Sim *s, uint64_t fired, int64_t block_ns, bool slept,
                       bool need_wait, size_t iter)
{
    /* try_poll_mode() asks the fd monitor only with handlers to poll */
    bool pollable = !need_wait || !s->in_list;
    int h;

    if (!s->p->max_ns) {
        return;     /* polling disabled: no bookkeeping */
    }
    /* aio_dispatch_handler(): start polling a handler once it fires */
    s->in_list |= fired;

    switch (s->pol.kind) {
    case POLICY_SERIES:
        series_adjust(s, fired, block_ns);
        break;
    case POLICY_UNPATCHED:
        /* aio_dispatch_ready_handlers() of 10.2.2 */
        for (h = 0; h < s->nh; h++) {
            if (fired & (1ULL << h)) {
                UnpatchedStep step;

                s->ns[h] = unpatched_adjust(s->ns[h], block_ns, s->p, &step);
            }
        }
        break;
    case POLICY_NEW:
        new_adjust(s, fired, block_ns, slept, pollable, iter);
        break;
    default:
        g_assert_not_reached();
    }
}

/* --dump: print the first dump_iters iterations of each replay to stderr */
static size_t dump_iters;

/* --no-references: --priced replays the policies only */
static bool priced_references = true;

static char *policy_name(const Policy *pol);

static void dump_iter(const Trace *tr, const Sim *s, size_t i,
                      int64_t poll_ns)
{
    g_autofree char *name = policy_name(&s->pol);
    int h;

    fprintf(stderr, "%s %s #%zu: gap %" PRId64 " poll %" PRId64 " %s "
            "fired 0x%" PRIx64 ", after:", tr->name, name, i, tr->it[i].gap,
            poll_ns, tr->it[i].gap <= poll_ns ? "caught" : "woken",
            tr->it[i].fired);
    if (s->pol.kind == POLICY_SERIES) {
        fprintf(stderr, " poll_ns %" PRId64 " est", s->poll_ns);
    } else {
        fprintf(stderr, " ns");
    }
    for (h = 0; h < s->nh; h++) {
        fprintf(stderr, " %" PRId64, s->ns[h]);
    }
    fprintf(stderr, "\n");
}

static Result replay(const Trace *tr, const Params *p, const Policy *pol)
{
    Result r = { 0 };
    Sim s;
    size_t i;

    if (pol->kind == POLICY_ORACLE) {
        for (i = 0; i < tr->n; i++) {
            if (tr->it[i].gap <= p->max_ns) {
                r.caught++;
                r.polled_ns += tr->it[i].gap;
            } else {
                r.woken++;
            }
        }
        return r;
    }

    sim_init(&s, p, pol, tr->nh);
    for (i = 0; i < tr->n; i++) {
        int64_t gap = tr->it[i].gap;
        int64_t poll_ns = sim_poll_ns(&s);

        if (gap <= poll_ns) {
            r.caught++;
            r.polled_ns += gap;
        } else {
            r.woken++;
            r.polled_ns += poll_ns;
            r.wasted_ns += poll_ns;
        }
        sim_adjust(&s, tr->it[i].fired, gap, false, false, i);
        if (i < dump_iters) {
            dump_iter(tr, &s, i, poll_ns);
        }
    }
    sim_cleanup(&s);
    return r;
}

static int gap_cmp(const void *a, const void *b);

/*
 * The priced replay (--priced): every policy pays for what it does in CPU
 * time and in latency, the same way.
 *
 * A blocking wakeup costs @cpu_ns of CPU and adds @lat_ns of latency (both
 * measured on the host by harness/wakeup/wakeup_cost.c).  Polling costs its
 * own time in CPU, and an iteration that polls at all pays @entry_ns more
 * for entering and leaving poll mode (P below is the polling time plus
 * that, for P > 0; where @entry_ns is negative, P is the polling time and
 * the CPU of polling for P is P + @entry_ns, polling_cpu()).  For an
 * iteration whose event comes @a ns after the wait started, with polling
 * time P:
 *
 *   polled event, a <= P:  caught; CPU a
 *   fd event,     a <= P:  polling does not see it: CPU P, latency P - a,
 *                          then the fd is ready without sleeping
 *   timer,        a <= P:  polling stops at the timer: CPU a
 *   any,          a >  P:  CPU P + cpu_ns; latency lat_ns (not for timers)
 *
 * except that an event of a complete trace whose recorded wait did not
 * sleep was there when the wait began: it costs min(a, P) and no wakeup,
 * and if the recorded run was held past its polling time in that wait (a
 * stall, see trace_stalls()) and P is at least the recorded polling time,
 * P is held as long: it costs the recorded polling time plus the stall if
 * that is more.
 *
 * In a complete trace a recorded wait that slept ended lat_ns after its
 * event came, so a = wait - lat_ns there (or arrive_ns, when the kernel's
 * wakeup of that wait was recorded: complete.py --wakeups), but not before
 * the recorded run stopped polling if a polled handler ended it; a timer
 * ends the wait when it expires, and otherwise a = wait.  A wait that the
 * recorded run's polling caught (woken 2) was not there when the wait
 * began: a = wait, and a policy that polls less sleeps for it; one that
 * catches it too sees block_ns = the recorded polling (wall clock), as the
 * recorded run did.
 * No policy polls longer than the iteration's cap (the wait's timeout, 0
 * when bottom halves are pending or the fd monitor needs a wait first); a
 * timer wait that polling reaches the cap of ends without sleeping.
 * block_ns, what the policy sees, is a when the event is caught, P for a
 * hidden fd event, and a + lat_ns after a wakeup.
 *
 * References: never polling (P = 0), polling to poll-max-ns, the best fixed
 * polling time in hindsight (the P that gives the least CPU over the whole
 * trace), and the offline optimum, which for each wait either polls exactly
 * until the event or blocks at once, whichever costs less CPU (and pays
 * nothing for an event that was there when the wait began); and the last
 * two within a latency budget, 1.05 times the added latency of the model of
 * 10.2.2 on the trace: best-fixed-lat and optimum-lat.
 */
typedef struct {
    int64_t cpu_ns;
    int64_t lat_ns;
    /*
     * CPU of entering and leaving poll mode, net of what the checks before
     * polling cost: run_poll_handlers() measures the polling time from
     * aio_poll()'s start, so those checks, which every iteration pays and
     * which the measured polling leaves out, are inside it.  Negative
     * where they cost more than entering and leaving (the Intel host:
     * a wait that polled for its whole time cost 130-200 ns less CPU
     * above the base than that time, harness/replay/README.md)
     */
    int64_t entry_ns;
} Price;

typedef struct {
    uint64_t wakeups;
    int64_t polled_ns;
    int64_t latency_ns;     /* added latency */
    int64_t fixed_ns;       /* the fixed polling time, for fixed policies */
    uint64_t compared;      /* iterations whose recorded polling time ... */
    uint64_t agreed;        /* ... the replay's equals (--lockstep) */
    uint64_t near;          /* ... or is within 10% of */
} Priced;

/*
 * --lockstep: the replay starts without the recorded run's history, so the
 * first iterations of a trace are not compared
 */
#define LOCKSTEP_SKIP 500

/*
 * Where polling for @poll_ns ends in the replay: entering and leaving poll
 * mode costs entry_ns on top of polling, and polling runs for its whole
 * time from aio_poll()'s start whatever the checks before it cost
 */
static int64_t priced_reach(int64_t poll_ns, const Price *pr)
{
    return poll_ns ? poll_ns + MAX(pr->entry_ns, 0) : 0;
}

/*
 * The CPU that polling for @poll_ns costs above what every iteration pays:
 * the polling time and entry_ns, which is negative where the checks before
 * polling, counted in the polling time, cost more than entering and
 * leaving poll mode.  Where entry_ns >= 0, priced_reach()
 */
static int64_t polling_cpu(int64_t poll_ns, const Price *pr)
{
    return poll_ns ? MAX(poll_ns + pr->entry_ns, 0) : 0;
}

/* --no-arrivals: leave the traces' arrive_ns aside */
static bool use_arrivals = true;

static int64_t iter_arrival(const Iter *it, const Price *pr)
{
    int64_t t;

    if (!it->woken || it->end == END_TIMER) {
        return it->gap;     /* a timer's wait ends when it expires */
    }
    /*
     * An event that the recorded run slept for came after that run stopped
     * polling: a polled handler's, or polling would have caught it; an
     * fd's, or it would have been there when the fd wait began, and the
     * thread would not have slept
     */
    t = use_arrivals && it->arrive >= 0 ? it->arrive : it->gap - pr->lat_ns;
    if (after_recorded && recorded_poll(it) > 0) {
        return MAX(t, MAX(it->polled,
                          priced_reach(recorded_poll(it), pr) + 1));
    }
    return MAX(t, it->polled);
}

static int64_t priced_cpu(const Priced *r, const Price *pr)
{
    return r->polled_ns + (int64_t)r->wakeups * pr->cpu_ns;
}

/*
 * The wait that the recorded run's policy saw of an event that arrived at
 * @a and was caught by polling: the wall-clock time, preemption included
 */
static int64_t caught_wait(const Iter *it, int64_t a)
{
    return !it->woken && !it->pending ? MAX(a, it->polled) : a;
}

/*
 * The polling that a wait charges for @ns of it: no more than up to the
 * cut in a wait whose recorded polling was cut (polling_cut()), the rest
 * of which the run spent without polling.  Until 2026-12-06 the replay
 * charged the whole wait: 10.0-12.8% too much polling per I/O on the
 * backport's runs with patch 16, where half the waits that poll are cut
 * by the notifier, and 16.7-26.6% on its runs with patches 1-15
 * (harness/replay/README.md).  What the policy is told of the wait does
 * not change.
 */
static int64_t polled_charge(const Iter *it, int64_t ns)
{
    return polling_cut(it) ? MIN(ns, it->polled) : ns;
}

/*
 * One wait with polling time @poll_ns; returns block_ns, and in @slept
 * whether the wait polled for all of @poll_ns and then slept, as aio_poll()
 * tells the policy
 */
static int64_t priced_wait(const Iter *it, const Price *pr, int64_t poll_ns,
                           Priced *r, bool *slept)
{
    int64_t a = iter_arrival(it, pr);
    /* A capped wait polls less than the policy chose, or not at all */
    bool full = !poll_ns || it->cap < 0 || poll_ns < it->cap;
    int64_t reach;

    *slept = false;
    if (it->cap >= 0 && poll_ns >= it->cap) {
        /*
         * try_poll_mode() polls no longer than the wait's timeout; a timer
         * due then ends the wait without sleeping
         */
        poll_ns = it->cap;
        if (it->end == END_TIMER && poll_ns > 0 && a > poll_ns) {
            r->polled_ns += polled_charge(it, polling_cpu(poll_ns, pr));
            return a;
        }
    }
    reach = priced_reach(poll_ns, pr);

    if (a <= reach) {
        if (it->end == END_FD && !fd_polled) {
            /* aio_poll() polled it all, then found the fd ready */
            *slept = full;
            r->polled_ns += polled_charge(it, polling_cpu(poll_ns, pr));
            r->latency_ns += reach - a;
            return reach;
        }
        r->polled_ns += polled_charge(it, a);
        return caught_wait(it, a);
    }
    if (stalls && !it->woken && !it->pending && recorded_poll(it) > 0 &&
        poll_ns >= recorded_poll(it)) {
        /*
         * The recorded run caught this event after the polling time it had
         * set: it was held past it (an interrupt handled on its CPU, a
         * preemption) until the event came.  A policy that polled at least
         * as long was held as long, and caught it too
         */
        r->polled_ns += a;
        return caught_wait(it, a);
    }
    r->polled_ns += polled_charge(it, polling_cpu(poll_ns, pr));
    *slept = full;          /* what aio_poll() can tell */
    if (it->pending) {
        /*
         * There when the fd wait began.  A policy that polled at least as
         * long as the recorded run was held as long as it was, until
         * the recorded polling ended (one that polled less may have gone
         * to sleep before the stall began, and is not charged for it)
         */
        if (it->stall && poll_ns >= recorded_poll(it)) {
            r->polled_ns += MAX(recorded_poll(it) + it->stall - poll_ns, 0);
        }
        return a;
    }
    r->wakeups++;
    if (it->end != END_TIMER) {
        r->latency_ns += pr->lat_ns;
    }
    /*
     * The recorded run slept for this event too: its policy saw the wait
     * that the trace holds.  The arrival less the price's latency can be
     * earlier than the end of the recorded polling (a wakeup faster than
     * the price's median), where iter_arrival() puts it instead
     */
    return it->woken ? MAX(it->gap, a) : a + pr->lat_ns;
}

/*
 * 10.2.2's idle handlers in iteration @it of a trace recorded under it: the
 * least polling time that the run had set up to then (@before: that of
 * the iterations before, -1 at the first).  The run's polling time is the
 * largest of the handlers' in the poll list, so it is never less than the
 * idle ones'; and 10.2.2 takes a handler out of the poll list 7 s after
 * polling last caught its event (remove_idle_poll_handlers()), so a time
 * held since before the trace can end in the middle of it.  Before
 * 2026-12-03 the replay took the least polling time of the whole trace
 * for all of it, and so took the idle handlers for gone from the start
 */
static int64_t idle_floor(const Trace *tr, const Iter *it, int64_t before)
{
    if (!tr->idle_known) {
        return tr->idle_ns;
    }
    if (it->set < 0) {
        return before < 0 ? tr->idle_ns : before;
    }
    return before < 0 ? it->set : MIN(before, it->set);
}

static Priced replay_priced(const Trace *tr, const Params *p,
                            const Policy *pol, const Price *pr)
{
    Priced r = { 0 };
    Sim s;
    size_t i;
    int64_t idle = -1;

    sim_init(&s, p, pol, tr->nh);
    if (pol->kind == POLICY_UNPATCHED) {
        int h;

        /*
         * Every handler was in the poll list before the trace began: until
         * its first event in the trace it is one of the idle ones
         */
        for (h = 0; h < tr->nh; h++) {
            s.ns[h] = tr->idle_ns;
        }
    }
    for (i = 0; i < tr->n; i++) {
        const Iter *it = &tr->it[i];
        int64_t poll_ns;
        uint64_t wakeups = r.wakeups;
        bool slept;
        int64_t block_ns;

        idle = idle_floor(tr, it, idle);
        s.idle_ns = idle;
        poll_ns = sim_poll_ns(&s);
        if (it->set >= 0 && i >= LOCKSTEP_SKIP) {
            int64_t d = sim_set_ns(&s) - it->set;

            r.compared++;
            r.agreed += d == 0;
            r.near += ABS(d) <= it->set / 10;
        }
        if (class_steps && context_classes && pol->kind == POLICY_NEW) {
            class_steps[i] = (ClassStep) {
                .since = s.since, .poll_ns = poll_ns,
                .polled_ns = -r.polled_ns, .wakeups = r.wakeups,
            };
        }
        block_ns = priced_wait(it, pr, poll_ns, &r, &slept);
        if (class_steps && context_classes && pol->kind == POLICY_NEW) {
            class_steps[i].polled_ns += r.polled_ns;
            class_steps[i].wakeups = r.wakeups - class_steps[i].wakeups;
        }
        if (policy_sees_arrivals && pol->kind == POLICY_NEW &&
            r.wakeups > wakeups && slept) {
            block_ns = MAX(iter_arrival(it, pr), poll_ns) +
                       policy_latency_ns + 1;
        }

        if (i < dump_iters) {
            g_autofree char *name = policy_name(pol);

            fprintf(stderr, "%s %s #%zu: wait %" PRId64 " end %c rec %s "
                    "polled %" PRId64 " cap %" PRId64 " set %" PRId64
                    " | poll %" PRId64 " %s\n", tr->name,
                    name, i, it->gap, "pft"[it->end],
                    it->woken ? "slept" : it->pending ? "pending" : "caught",
                    it->polled, it->cap, it->set, poll_ns,
                    r.wakeups > wakeups ? "slept" : "no-sleep");
        }
        s.ended_fd = it->end == END_FD && !fd_polled;
        sim_adjust(&s, it->fired | (fd_polled && it->end == END_FD),
                   block_ns, slept, it->need_wait ||
                   (pol->kind == POLICY_NEW &&
                    new_leaves_out(tr, it, poll_ns)), i);
    }
    sim_cleanup(&s);
    return r;
}

static Priced replay_fixed(const Trace *tr, const Price *pr, int64_t poll_ns)
{
    Priced r = { .fixed_ns = poll_ns };
    size_t i;

    for (i = 0; i < tr->n; i++) {
        bool slept;

        priced_wait(&tr->it[i], pr, poll_ns, &r, &slept);
    }
    return r;
}

static Priced replay_optimum(const Trace *tr, const Price *pr)
{
    Priced r = { 0 };
    size_t i;

    for (i = 0; i < tr->n; i++) {
        int64_t a = iter_arrival(&tr->it[i], pr);

        if (tr->it[i].pending) {
            continue;       /* the fd wait finds it: nothing to pay */
        }
        if (a <= pr->cpu_ns &&
            (tr->it[i].cap < 0 || a <= tr->it[i].cap ||
             tr->it[i].end == END_TIMER)) {
            r.polled_ns += a;
        } else {
            r.wakeups++;
            if (tr->it[i].end != END_TIMER) {
                r.latency_ns += pr->lat_ns;
            }
        }
    }
    return r;
}

/*
 * The offline optimum with a latency budget: the least CPU of any choice,
 * per wait, between polling exactly until the event and blocking at once,
 * whose added latency is at most @budget_ns.  Every policy pays at least
 * that much CPU for a wait (polling until the event, with no added
 * latency, or a wakeup with lat_ns of it), so none that keeps within the
 * budget costs less.  The optimum blocks for the waits longer than a
 * wakeup's CPU; each one of them that polling may reach and that is not a
 * timer's, polled instead, costs its arrival less a wakeup's CPU more and
 * lat_ns less latency: take the cheapest until the latency fits.  The
 * result is over the budget if even polling for all of them is.
 */
static Priced replay_optimum_lat(const Trace *tr, const Price *pr,
                                 int64_t budget_ns)
{
    Priced r = replay_optimum(tr, pr);
    g_autofree int64_t *extra = g_new(int64_t, tr->n + 1);
    size_t i, n = 0;

    for (i = 0; i < tr->n; i++) {
        const Iter *it = &tr->it[i];
        int64_t a = iter_arrival(it, pr);

        if (!it->pending && it->end != END_TIMER && a > pr->cpu_ns &&
            (it->cap < 0 || a <= it->cap)) {
            extra[n++] = a;
        }
    }
    qsort(extra, n, sizeof(*extra), gap_cmp);
    for (i = 0; i < n && r.latency_ns > budget_ns && pr->lat_ns > 0; i++) {
        r.polled_ns += extra[i];
        r.wakeups--;
        r.latency_ns -= pr->lat_ns;
    }
    return r;
}

/*
 * The best fixed polling time in hindsight, up to poll-max-ns: in @best the
 * one with the least CPU, in @best_lat the one with the least CPU among
 * those whose added latency is at most @budget_ns (if none is, the one with
 * the least added latency).  The CPU of a fixed time P is piecewise linear
 * in P between the arrivals, and so is the added latency, so the least is
 * at 0, at poll-max-ns or at an arrival: try them all.
 */
static bool fixed_better(const Priced *r, const Priced *best,
                         const Price *pr, int64_t budget_ns)
{
    bool fits = r->latency_ns <= budget_ns;
    bool best_fits = best->latency_ns <= budget_ns;

    if (fits != best_fits) {
        return fits;
    }
    if (!fits) {
        return r->latency_ns < best->latency_ns;
    }
    return priced_cpu(r, pr) < priced_cpu(best, pr);
}

/*
 * --edges-only: the best fixed polling times (best-fixed, best-fixed-lat
 * and the clairvoyant references) chosen among the times that patch 9's
 * histogram can choose, its bins' edges (poll-max-ns >> k, k = 0 ..
 * AIO_POLL_BINS - 1) and 0, instead of among all of the trace's arrivals:
 * what the histogram's resolution costs a rule that knows as much
 */
static bool edges_only;

static void replay_best_fixed(const Trace *tr, const Params *p,
                              const Price *pr, int64_t budget_ns,
                              Priced *best, Priced *best_lat)
{
    g_autofree int64_t *cand = g_new(int64_t, tr->n + AIO_POLL_BINS + 2);
    size_t i, n = 0;

    *best = *best_lat = replay_fixed(tr, pr, 0);
    cand[n++] = p->max_ns;
    if (edges_only) {
        for (i = 1; i < AIO_POLL_BINS; i++) {
            cand[n++] = p->max_ns >> i;
        }
    } else {
        for (i = 0; i < tr->n; i++) {
            int64_t a = iter_arrival(&tr->it[i], pr);

            if (a > 0 && a < p->max_ns) {
                cand[n++] = a;
            }
        }
    }
    qsort(cand, n, sizeof(*cand), gap_cmp);
    for (i = 0; i < n; i++) {
        Priced r;

        if (i && cand[i] == cand[i - 1]) {
            continue;
        }
        r = replay_fixed(tr, pr, cand[i]);
        if (priced_cpu(&r, pr) < priced_cpu(best, pr)) {
            *best = r;
        }
        if (fixed_better(&r, best_lat, pr, budget_ns)) {
            *best_lat = r;
        }
    }
}

static void priced_row(FILE *out, const Trace *tr, const char *policy,
                       const Priced *r, const Priced *opt, const Price *pr)
{
    fprintf(out, "%s,%s,%" PRId64 ",%" PRId64 ",%zu,%" PRIu64 ",%" PRId64
            ",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "\n",
            tr->name, policy, pr->cpu_ns, pr->lat_ns, tr->n, tr->ios,
            r->polled_ns, r->wakeups, priced_cpu(r, pr), r->latency_ns,
            priced_cpu(opt, pr), r->fixed_ns);
}

/*
 * --clairvoyant: references that know more than any online rule, to bound
 * what one can do on a trace.  Each is the best fixed polling time in
 * hindsight chosen separately for every class of waits; a rule whose
 * polling time depends only on a wait's class can do no better than the
 * best time for each class, and an online rule does not know the best
 * time of a class until the trace has ended.  The classes: the previous
 * wait's kind and arrival (how it ended, whether its event was there,
 * its arrival to within a factor of 2), the previous two waits' arrivals,
 * a stretch of CLAIRVOYANT_WINDOW consecutive waits (a rule told in
 * advance which polling time suits each stretch), and the previous wait
 * within each stretch.  The more classes, the closer to the optimum, and
 * the less such a rule resembles one that learns online.
 */
static bool clairvoyant;

#define CLAIRVOYANT_WINDOW 1000
#define ARRIVAL_BUCKETS 18

/* @a to within a factor of 2, from below 512 ns to above 32 ms */
static int arrival_bucket(int64_t a)
{
    int b = 0;

    for (a /= 512; a > 0 && b < ARRIVAL_BUCKETS - 1; a >>= 1) {
        b++;
    }
    return b;
}

/* What a rule may know of wait @i: the previous wait's kind and arrival */
static int class_prev1(const Trace *tr, const Price *pr, size_t i)
{
    const Iter *it;

    if (!i) {
        return 0;
    }
    it = &tr->it[i - 1];
    return 1 + ((it->end * 2 + it->pending) * ARRIVAL_BUCKETS +
                arrival_bucket(iter_arrival(it, pr)));
}

#define PREV1_CLASSES (1 + 3 * 2 * ARRIVAL_BUCKETS)

/*
 * clairvoyant-since-long: how many waits ago the last one whose event came
 * later than a wakeup's CPU price (and that the optimum slept for), up to
 * SINCE_LONG_CLASSES - 1
 */
#define SINCE_LONG_CLASSES 16

/* @cls[i]: wait i's class of clairvoyant-since-long */
static void since_long_classes(const Trace *tr, const Price *pr, int *cls)
{
    size_t i;
    int since;

    for (i = 0, since = SINCE_LONG_CLASSES - 1; i < tr->n; i++) {
        cls[i] = since;
        since = iter_arrival(&tr->it[i], pr) > pr->cpu_ns ? 0 :
                MIN(since + 1, SINCE_LONG_CLASSES - 1);
    }
}

/* The best fixed polling time for each class of waits: see --clairvoyant */
static Priced replay_best_by_class(const Trace *tr, const Params *p,
                                   const Price *pr, const int *cls,
                                   int ncls)
{
    g_autofree size_t *start = g_new0(size_t, ncls + 1);
    g_autofree Iter *sorted = g_new(Iter, tr->n);
    g_autofree size_t *fill = NULL;
    Priced sum = { .fixed_ns = -1 };
    size_t i;
    int c;

    for (i = 0; i < tr->n; i++) {
        start[cls[i] + 1]++;
    }
    for (c = 0; c < ncls; c++) {
        start[c + 1] += start[c];
    }
    fill = g_memdup2(start, sizeof(*start) * ncls);
    for (i = 0; i < tr->n; i++) {
        sorted[fill[cls[i]]++] = tr->it[i];
    }
    for (c = 0; c < ncls; c++) {
        Trace sub = *tr;
        Priced best, best_lat;

        if (start[c] == start[c + 1]) {
            continue;
        }
        sub.it = &sorted[start[c]];
        sub.n = start[c + 1] - start[c];
        replay_best_fixed(&sub, p, pr, INT64_MAX, &best, &best_lat);
        sum.wakeups += best.wakeups;
        sum.polled_ns += best.polled_ns;
        sum.latency_ns += best.latency_ns;
    }
    return sum;
}

/* Into @sub, the waits @from..@to - 1 of @tr whose class in @cls is @c */
static size_t class_waits(const Trace *tr, const int *cls, int c,
                          size_t from, size_t to, Iter *sub)
{
    size_t i, n = 0;

    for (i = from; i < to; i++) {
        if (cls[i] == c) {
            sub[n++] = tr->it[i];
        }
    }
    return n;
}

/*
 * --class-report: per class of clairvoyant-since-long, the online position
 * rule's polling (class_steps, from its replay just before) beside the best
 * fixed polling time in hindsight for the same waits, what each of the
 * times the histogram can choose would have cost them, and how many of
 * them could poll and had their event within a wakeup's CPU price (short),
 * of which how many an fd without io_poll() ended (fd: polling cannot end
 * such a wait, and a thread that polls through its event cannot tell when
 * it came)
 */
static void class_report_rows(const Trace *tr, const Params *p,
                              const Price *pr)
{
    g_autofree int *cls = g_new(int, tr->n);
    g_autofree Iter *sub = g_new(Iter, tr->n);
    size_t i;
    int c, k;

    since_long_classes(tr, pr, cls);
    fprintf(stderr, "# %s: class waits same-class | online mean_poll_ns "
            "polled_ns wakeups cpu_ns | best fixed_ns polled_ns wakeups "
            "cpu_ns | cpu_ns at 0 and each edge | short fd\n", tr->name);
    for (c = 0; c < SINCE_LONG_CLASSES; c++) {
        Trace st = *tr;
        Priced best, best_lat, f;
        size_t n = 0, same = 0, nshort = 0, nfd = 0;
        int64_t poll = 0, polled = 0;
        uint64_t wakeups = 0;

        for (i = 0; i < tr->n; i++) {
            if (cls[i] != c) {
                continue;
            }
            sub[n++] = tr->it[i];
            if (tr->it[i].cap != 0 &&
                iter_arrival(&tr->it[i], pr) <= pr->cpu_ns) {
                /* a wait that the optimum may poll for */
                nshort++;
                nfd += tr->it[i].end == END_FD;
            }
            same += class_steps[i].since == MIN(c, context_classes - 1);
            poll += class_steps[i].poll_ns;
            polled += class_steps[i].polled_ns;
            wakeups += class_steps[i].wakeups;
        }
        if (!n) {
            continue;
        }
        st.it = sub;
        st.n = n;
        replay_best_fixed(&st, p, pr, INT64_MAX, &best, &best_lat);
        fprintf(stderr, "%s %d %zu %zu | %" PRId64 " %" PRId64 " %" PRIu64
                " %" PRId64 " | %" PRId64 " %" PRId64 " %" PRIu64 " %"
                PRId64 " |", tr->name, c, n, same, poll / (int64_t)n,
                polled, wakeups, polled + (int64_t)wakeups * pr->cpu_ns,
                best.fixed_ns, best.polled_ns, best.wakeups,
                priced_cpu(&best, pr));
        for (k = AIO_POLL_BINS; k >= 0; k--) {
            f = replay_fixed(&st, pr, k == AIO_POLL_BINS ? 0 :
                             p->max_ns >> k);
            fprintf(stderr, " %" PRId64, priced_cpu(&f, pr));
        }
        fprintf(stderr, " | %zu %zu\n", nshort, nfd);
    }

    /*
     * Learnt, not told: each class's best time on the first half of the
     * trace, applied to the second half
     */
    {
        Trace second = *tr;
        Priced sum = { 0 }, opt2, fix2, fix2_lat, hind = { 0 };
        size_t half = tr->n / 2;

        second.it = tr->it + half;
        second.n = tr->n - half;
        for (c = 0; c < SINCE_LONG_CLASSES; c++) {
            Trace a = *tr, b = *tr;
            Priced best, best_lat, f;

            a.it = sub;
            a.n = class_waits(tr, cls, c, 0, half, sub);
            if (!a.n) {
                continue;
            }
            replay_best_fixed(&a, p, pr, INT64_MAX, &best, &best_lat);
            b.it = sub;
            b.n = class_waits(tr, cls, c, half, tr->n, sub);
            if (!b.n) {
                continue;
            }
            f = replay_fixed(&b, pr, best.fixed_ns);
            sum.polled_ns += f.polled_ns;
            sum.wakeups += f.wakeups;
            replay_best_fixed(&b, p, pr, INT64_MAX, &best, &best_lat);
            hind.polled_ns += best.polled_ns;
            hind.wakeups += best.wakeups;
        }
        opt2 = replay_optimum(&second, pr);
        replay_best_fixed(&second, p, pr, INT64_MAX, &fix2, &fix2_lat);
        fprintf(stderr, "# %s second half: optimum %" PRId64 " best-fixed %"
                PRId64 " since-long in hindsight %" PRId64 " since-long "
                "learnt on the first half %" PRId64 "\n", tr->name,
                priced_cpu(&opt2, pr), priced_cpu(&fix2, pr),
                priced_cpu(&hind, pr), priced_cpu(&sum, pr));
    }
}

static void clairvoyant_rows(FILE *out, const Trace *tr, const Params *p,
                             const Price *pr, const Priced *opt)
{
    g_autofree int *cls = g_new(int, tr->n);
    int nwin = tr->n / CLAIRVOYANT_WINDOW + 1;
    Priced r;
    size_t i;

    for (i = 0; i < tr->n; i++) {
        cls[i] = class_prev1(tr, pr, i);
    }
    r = replay_best_by_class(tr, p, pr, cls, PREV1_CLASSES);
    priced_row(out, tr, "clairvoyant-prev1", &r, opt, pr);

    for (i = 0; i < tr->n; i++) {
        cls[i] = i < 2 ? 0 :
            arrival_bucket(iter_arrival(&tr->it[i - 1], pr)) *
            ARRIVAL_BUCKETS +
            arrival_bucket(iter_arrival(&tr->it[i - 2], pr));
    }
    r = replay_best_by_class(tr, p, pr, cls,
                             ARRIVAL_BUCKETS * ARRIVAL_BUCKETS);
    priced_row(out, tr, "clairvoyant-prev2", &r, opt, pr);

    since_long_classes(tr, pr, cls);
    r = replay_best_by_class(tr, p, pr, cls, SINCE_LONG_CLASSES);
    priced_row(out, tr, "clairvoyant-since-long", &r, opt, pr);

    for (i = 0; i < tr->n; i++) {
        cls[i] = i / CLAIRVOYANT_WINDOW;
    }
    r = replay_best_by_class(tr, p, pr, cls, nwin);
    priced_row(out, tr, "clairvoyant-window", &r, opt, pr);

    for (i = 0; i < tr->n; i++) {
        cls[i] = i / CLAIRVOYANT_WINDOW * PREV1_CLASSES +
                 class_prev1(tr, pr, i);
    }
    r = replay_best_by_class(tr, p, pr, cls, nwin * PREV1_CLASSES);
    priced_row(out, tr, "clairvoyant-window-prev1", &r, opt, pr);
}

/*
 * --lockstep: per trace and policy, how many iterations after the first
 * LOCKSTEP_SKIP had a recorded polling time, and in how many the replay's
 * equalled it or came within 10% of it; LOCKSTEP_SKIP itself; and the
 * trace's stalls (harness/replay/evidence.py checks them against its own)
 */
static void lockstep_row(FILE *ls, const Trace *tr, const char *policy,
                         const Priced *r)
{
    if (ls) {
        fprintf(ls, "%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                ",%d,%" PRIu64 ",%" PRId64 "\n", tr->name, policy,
                r->compared, r->agreed, r->near, tr->need_wait_inferred,
                LOCKSTEP_SKIP, tr->stalls, tr->stalled_ns);
    }
}

/* --priced: one CSV row per trace and policy */
static void run_priced(FILE *out, FILE *ls, Trace **trs, int ntr,
                       const Params *p, const Policy *pols, int npol,
                       const Price *pr)
{
    int i, j;

    if (ls) {
        fprintf(ls, "trace,policy,compared,agreed,within_10pct,"
                "need_wait_inferred,skipped,stalls,stalled_ns\n");
    }

    fprintf(out, "trace,policy,wakeup_cost_ns,wakeup_latency_ns,"
            "iterations,ios,polling_ns,wakeups,cpu_ns,added_latency_ns,"
            "optimum_cpu_ns,fixed_poll_ns\n");
    for (i = 0; i < ntr; i++) {
        const Trace *tr = trs[i];
        Priced opt = priced_references ? replay_optimum(tr, pr)
                                       : (Priced) { 0 };
        Priced r, fix_lat;
        int64_t unpatched_lat = -1, budget;

        for (j = 0; j < npol; j++) {
            g_autofree char *name = NULL;

            if (pols[j].kind == POLICY_ORACLE) {
                continue;
            }
            r = replay_priced(tr, p, &pols[j], pr);
            name = pols[j].kind == POLICY_UNPATCHED ? g_strdup("unpatched")
                   : g_strdup_printf("series-w%d", pols[j].weight);
            priced_row(out, tr, name, &r, &opt, pr);
            lockstep_row(ls, tr, name, &r);
            if (pols[j].kind == POLICY_UNPATCHED) {
                unpatched_lat = r.latency_ns;
            }
            if (pols[j].kind == POLICY_SERIES) {
                Policy new = { POLICY_NEW, pols[j].weight };

                g_free(name);
                if (class_report) {
                    g_free(class_steps);
                    class_steps = g_new0(ClassStep, tr->n);
                }
                r = replay_priced(tr, p, &new, pr);
                name = g_strdup_printf("new-w%d", pols[j].weight);
                priced_row(out, tr, name, &r, &opt, pr);
                lockstep_row(ls, tr, name, &r);
            }
        }
        if (!priced_references) {
            continue;
        }
        r = replay_fixed(tr, pr, 0);
        priced_row(out, tr, "never-poll", &r, &opt, pr);
        r = replay_fixed(tr, pr, p->max_ns);
        priced_row(out, tr, "poll-to-max", &r, &opt, pr);
        /*
         * The latency budget: 1.05 times the added latency of 10.2.2's model
         * on the same trace, the bound that the project's targets set
         */
        budget = unpatched_lat + unpatched_lat / 20;
        replay_best_fixed(tr, p, pr, budget, &r, &fix_lat);
        priced_row(out, tr, "best-fixed", &r, &opt, pr);
        priced_row(out, tr, "optimum", &opt, &opt, pr);
        if (unpatched_lat >= 0) {
            priced_row(out, tr, "best-fixed-lat", &fix_lat, &opt, pr);
            r = replay_optimum_lat(tr, pr, budget);
            priced_row(out, tr, "optimum-lat", &r, &opt, pr);
        }
        if (clairvoyant) {
            clairvoyant_rows(out, tr, p, pr, &opt);
        }
        if (class_report && class_steps) {
            class_report_rows(tr, p, pr);
            g_clear_pointer(&class_steps, g_free);
        }
    }
}

/* The oracle's frontier: least polling time that catches k events */
typedef struct {
    int64_t *sum;       /* sum[k]: the sum of the k smallest gaps */
    size_t catchable;   /* gaps <= poll-max-ns */
} Frontier;

static int gap_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

static void frontier_init(Frontier *f, const Trace *tr, const Params *p)
{
    int64_t *gaps = g_new(int64_t, tr->n);
    size_t i;

    for (i = 0; i < tr->n; i++) {
        gaps[i] = tr->it[i].gap;
    }
    qsort(gaps, tr->n, sizeof(int64_t), gap_cmp);
    f->sum = g_new(int64_t, tr->n + 1);
    f->sum[0] = 0;
    f->catchable = 0;
    for (i = 0; i < tr->n; i++) {
        f->sum[i + 1] = f->sum[i] + gaps[i];
        if (gaps[i] <= p->max_ns) {
            f->catchable = i + 1;
        }
    }
    g_free(gaps);
}

/* Formatting, integers only */

static char *fmt_ms(int64_t ns)
{
    return g_strdup_printf("%s%" PRId64 ".%03" PRId64, ns < 0 ? "-" : "",
                           ABS(ns) / MS, ABS(ns) / US % 1000);
}

static char *fmt_pct(uint64_t part, uint64_t whole)
{
    uint64_t permille = whole ? (part * 1000 + whole / 2) / whole : 0;

    return g_strdup_printf("%" PRIu64 ".%" PRIu64, permille / 10,
                           permille % 10);
}

static char *policy_name(const Policy *pol)
{
    switch (pol->kind) {
    case POLICY_ORACLE:
        return g_strdup("oracle");
    case POLICY_UNPATCHED:
        return g_strdup("unpatched");
    case POLICY_SERIES:
        return g_strdup_printf("series w=%d", pol->weight);
    case POLICY_NEW:
        return g_strdup_printf("new w=%d", pol->weight);
    }
    g_assert_not_reached();
}

typedef struct {
    Trace *tr;
    Frontier f;
    Result *res;        /* one per policy */
} TraceReport;

static void report_trace_md(FILE *out, const TraceReport *tre,
                            const Policy *pols, int npol, const Params *p)
{
    const Trace *tr = tre->tr;
    g_autofree char *dur = fmt_ms(tr->end);
    int i;

    fprintf(out, "### %s\n\n", tr->name);
    fprintf(out, "%zu iterations, %" PRIu64 " events of %d handler(s) "
            "over %s ms; %zu iterations come within poll-max-ns.\n\n",
            tr->n, tr->events, tr->nh, dur, tre->f.catchable);
    fprintf(out, "| policy | caught | woken | caught %% | polling ms "
            "| wasted ms | ns/caught | missed | extra polling ms |\n");
    fprintf(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (i = 0; i < npol; i++) {
        const Result *r = &tre->res[i];
        g_autofree char *name = policy_name(&pols[i]);
        g_autofree char *pct = fmt_pct(r->caught, tr->n);
        g_autofree char *polled = fmt_ms(r->polled_ns);
        g_autofree char *wasted = fmt_ms(r->wasted_ns);
        g_autofree char *extra = fmt_ms(r->polled_ns -
                                        tre->f.sum[r->caught]);

        fprintf(out, "| %s | %" PRIu64 " | %" PRIu64 " | %s | %s | %s "
                "| %" PRId64 " | %" PRIu64 " | %s |\n",
                name, r->caught, r->woken, pct, polled, wasted,
                r->caught ? r->polled_ns / (int64_t)r->caught : 0,
                (uint64_t)tre->f.catchable - r->caught, extra);
    }
    fprintf(out, "\n");
}

static void report_md(FILE *out, TraceReport *tres, int ntr,
                      const Policy *pols, int npol, const Params *p)
{
    int i, j;

    fprintf(out, "## Replay of aio_poll() traces: polling policies against "
            "the offline oracle\n\n");
    fprintf(out, "poll-max-ns %" PRId64 ", poll-grow %" PRId64
            ", poll-shrink %" PRId64 ".  Exact figures from a model with a "
            "fake clock (tests/bench/aio-poll-replay.c); they do not vary "
            "from run to run.\n\n", p->max_ns, p->grow, p->shrink);
    fprintf(out, "*caught*: events that polling caught; *woken*: events "
            "that needed a blocking wait (both count aio_poll() "
            "iterations: events at the same time count once); "
            "*polling*: time spent polling, "
            "of which *wasted* on polls that caught nothing; *missed*: "
            "events the oracle catches and the policy does not; *extra "
            "polling*: polling time above the least that catches as many "
            "events (the oracle's frontier).\n\n");

    /* Summary: caught / polling ms, one column per policy */
    fprintf(out, "| trace |");
    for (j = 0; j < npol; j++) {
        g_autofree char *name = policy_name(&pols[j]);

        fprintf(out, " %s |", name);
    }
    fprintf(out, "\n|---|");
    for (j = 0; j < npol; j++) {
        fprintf(out, "---:|");
    }
    fprintf(out, "\n");
    for (i = 0; i < ntr; i++) {
        fprintf(out, "| %s |", tres[i].tr->name);
        for (j = 0; j < npol; j++) {
            g_autofree char *polled = fmt_ms(tres[i].res[j].polled_ns);

            fprintf(out, " %" PRIu64 " / %s |", tres[i].res[j].caught,
                    polled);
        }
        fprintf(out, "\n");
    }
    fprintf(out, "\nEach cell: events caught / ms spent polling.\n\n");

    for (i = 0; i < ntr; i++) {
        report_trace_md(out, &tres[i], pols, npol, p);
    }
}

static void report_csv(FILE *out, TraceReport *tres, int ntr,
                       const Policy *pols, int npol, const Params *p)
{
    int i, j;

    fprintf(out, "trace,policy,weight,max_ns,grow,shrink,iterations,"
            "catchable,caught,woken,polled_ns,wasted_ns,frontier_ns\n");
    for (i = 0; i < ntr; i++) {
        for (j = 0; j < npol; j++) {
            const Result *r = &tres[i].res[j];
            g_autofree char *name = policy_name(&pols[j]);

            fprintf(out, "%s,%s,%d,%" PRId64 ",%" PRId64 ",%" PRId64
                    ",%zu,%zu,%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%" PRId64
                    ",%" PRId64 "\n", tres[i].tr->name, name,
                    pols[j].kind == POLICY_SERIES ? pols[j].weight : -1,
                    p->max_ns, p->grow, p->shrink, tres[i].tr->n,
                    tres[i].f.catchable, r->caught, r->woken, r->polled_ns,
                    r->wasted_ns, tres[i].f.sum[r->caught]);
        }
    }
}

static void report_frontier(FILE *out, TraceReport *tres, int ntr)
{
    int i;

    fprintf(out, "trace,caught,polled_ns\n");
    for (i = 0; i < ntr; i++) {
        size_t k, n = tres[i].f.catchable;
        size_t step = MAX(1, n / FRONTIER_POINTS);

        for (k = 0; k <= n; k += step) {
            fprintf(out, "%s,%zu,%" PRId64 "\n", tres[i].tr->name, k,
                    tres[i].f.sum[k]);
        }
        if (n % step) {
            fprintf(out, "%s,%zu,%" PRId64 "\n", tres[i].tr->name, n,
                    tres[i].f.sum[n]);
        }
    }
}

/* --check */

/*
 * Pinned figures at poll-max-ns 32768, poll-grow 0, poll-shrink 0.  The
 * oracle and unpatched rows must match exactly: they change only if the
 * traces or the model of 10.2.2 change.  The series rows must not get
 * worse: fewer caught events or more polling fails; better prints a note to
 * update the pins.  A change that catches more events but polls longer, or
 * the reverse, fails too: judge the trade with the report, then re-pin.
 * Each trace needs pins for the oracle, unpatched and the default weight.
 */
#define PIN_ORACLE    -2
#define PIN_UNPATCHED -1

static const struct {
    const char *trace;
    int weight;
    uint64_t caught;
    int64_t polled_ns;
} pins[] = {
    /* From test_steady() in tests/unit/test-aio-poll-weight.c */
    { "steady", 3, 99, 99 * 10000 },
    /* The synthetic traces, printed by --check --print-pins */
    { "fixed", PIN_ORACLE, 20000, 240000000 },
    { "fixed", PIN_UNPATCHED, 19997, 239976000 },
    { "fixed", 3, 19999, 239988000 },
    { "bimodal", PIN_ORACLE, 20766, 159998149 },
    { "bimodal", PIN_UNPATCHED, 20763, 159982522 },
    { "bimodal", 3, 20636, 159832996 },
    { "poisson", PIN_ORACLE, 16064, 193544768 },
    { "poisson", PIN_UNPATCHED, 11217, 222749952 },
    { "poisson", 3, 11938, 238899636 },
    { "onoff", PIN_ORACLE, 19989, 98952733 },
    { "onoff", PIN_UNPATCHED, 19668, 106721189 },
    { "onoff", 3, 14983, 75618967 },
    { "steady", PIN_ORACLE, 100, 1000000 },
    { "steady", PIN_UNPATCHED, 97, 982000 },
    { "alternate", PIN_ORACLE, 10000, 300000000 },
    { "alternate", PIN_UNPATCHED, 0, 40000000 },
    { "alternate", 3, 8750, 610640848 },
    { "regime", PIN_ORACLE, 14210, 92791040 },
    { "regime", PIN_UNPATCHED, 10107, 59331040 },
    { "regime", 3, 10538, 184303821 },
};

static bool check_pin(const char *trace, int weight, const Result *r)
{
    g_autofree char *what = weight == PIN_ORACLE ? g_strdup("oracle") :
                            weight == PIN_UNPATCHED ? g_strdup("unpatched") :
                            g_strdup_printf("series w=%d", weight);
    size_t i;

    for (i = 0; i < ARRAY_SIZE(pins); i++) {
        bool worse, differs;

        if (strcmp(pins[i].trace, trace) || pins[i].weight != weight) {
            continue;
        }
        differs = r->caught != pins[i].caught ||
                  r->polled_ns != pins[i].polled_ns;
        worse = weight < 0 ? differs : r->caught < pins[i].caught ||
                                       r->polled_ns > pins[i].polled_ns;
        if (worse) {
            printf("FAIL synth:%s %s: caught %" PRIu64 ", polled %" PRId64
                   " ns; pinned %" PRIu64 ", %" PRId64 " ns\n", trace, what,
                   r->caught, r->polled_ns, pins[i].caught,
                   pins[i].polled_ns);
            return false;
        }
        if (differs) {
            printf("note synth:%s %s improved: caught %" PRIu64 ", polled %"
                   PRId64 " ns; pinned %" PRIu64 ", %" PRId64 " ns; update "
                   "the pins\n", trace, what, r->caught, r->polled_ns,
                   pins[i].caught, pins[i].polled_ns);
        } else {
            printf("ok   synth:%s %s: caught %" PRIu64 ", polled %" PRId64
                   " ns\n", trace, what, r->caught, r->polled_ns);
        }
        return true;
    }
    if (weight < 0 || weight == AIO_POLL_WEIGHT_DEFAULT) {
        printf("FAIL synth:%s %s: no pinned figures (--print-pins)\n",
               trace, what);
        return false;
    }
    return true;
}

/* The trace format must carry a trace exactly */
static bool check_round_trip(const Trace *tr)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    Trace *back;
    bool ok;

    trace_write(f, tr);
    fclose(f);
    f = fmemopen(buf, size, "r");
    back = trace_parse(f, tr->name);
    fclose(f);
    free(buf);
    ok = back->n == tr->n && back->nh == tr->nh &&
         back->events == tr->events &&
         !memcmp(back->it, tr->it, tr->n * sizeof(Iter));
    trace_free(back);
    printf("%s %s: the trace format round-trips\n", ok ? "ok  " : "FAIL",
           tr->name);
    return ok;
}

static int run_check(bool print_pins)
{
    Params p = { .max_ns = DEFAULT_MAX_NS };
    bool ok = true;
    size_t i;
    int w;

    for (i = 0; i < ARRAY_SIZE(synth); i++) {
        Trace *tr = trace_synth(synth[i].name);
        Policy oracle = { POLICY_ORACLE }, unpatched = { POLICY_UNPATCHED };
        Frontier f;
        Result r;

        frontier_init(&f, tr, &p);
        ok &= check_round_trip(tr);

        r = replay(tr, &p, &oracle);
        ok &= r.caught == f.catchable && r.polled_ns == f.sum[r.caught];
        ok &= check_pin(synth[i].name, PIN_ORACLE, &r);
        if (print_pins) {
            printf("    { \"%s\", PIN_ORACLE, %" PRIu64 ", %" PRId64 " },\n",
                   synth[i].name, r.caught, r.polled_ns);
        }
        r = replay(tr, &p, &unpatched);
        ok &= check_pin(synth[i].name, PIN_UNPATCHED, &r);
        if (print_pins) {
            printf("    { \"%s\", PIN_UNPATCHED, %" PRIu64 ", %" PRId64
                   " },\n", synth[i].name, r.caught, r.polled_ns);
        }

        /* Every weight, each also checked against aio_adjust_polling_time() */
        for (w = 1; w <= 6; w++) {
            Policy series = { POLICY_SERIES, w };

            r = replay(tr, &p, &series);
            /* No policy beats the frontier */
            if (r.caught > f.catchable || r.polled_ns < f.sum[r.caught]) {
                printf("FAIL %s w=%d beats the oracle\n", tr->name, w);
                ok = false;
            }
            ok &= check_pin(synth[i].name, w, &r);
            if (print_pins && w == 3) {
                printf("    { \"%s\", 3, %" PRIu64 ", %" PRId64 " },\n",
                       synth[i].name, r.caught, r.polled_ns);
            }
        }
        g_free(f.sum);
        trace_free(tr);
    }
    printf("%s\n", ok ? "all checks passed" : "some checks FAILED");
    return ok ? 0 : 1;
}

/* --model-check */

/*
 * A recording of a real run of unpatched QEMU 10.2.2, to check the model
 * of its policy against: the calls of adjust_polling_time() of one
 * AioContext and the poll_grow and poll_shrink events that they emitted,
 * in order.  Text, one record per line:
 *
 *     params <poll-max-ns> <poll-grow> <poll-shrink>
 *     adjust <handler_id> <block_ns> <the handler's poll.ns before>
 *     grow <old> <new>
 *     shrink <old> <new>
 *
 * 'params' comes first; a 'grow' or 'shrink' line belongs to the 'adjust'
 * line before it.  Empty lines and lines that start with '#' are ignored.
 * 10.2.2 has no trace event for the calls: the harness adds one to the
 * unpatched tree to record them.
 */

static const char *const step_name[] = {
    [UNPATCHED_KEEP] = "no event",
    [UNPATCHED_SHRINK] = "shrink",
    [UNPATCHED_GROW] = "grow",
};

/*
 * Split a line of the recording into its first word and up to 3
 * non-negative numbers; returns how many numbers, or -1
 */
static int split_record(char *line, const char **word, int64_t *num)
{
    char *save, *tok;
    int n = 0;

    *word = strtok_r(line, " \t\r\n", &save);
    while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
        if (n == 3 || qemu_strtoi64(tok, NULL, 10, &num[n]) || num[n] < 0) {
            return -1;
        }
        n++;
    }
    return n;
}

/*
 * Feed the model the recorded calls, each handler starting at 0 ns, and
 * compare its handlers' polling times and its grow and shrink events with
 * the recording.  Returns 0 if they all match, 1 at the first mismatch.
 */
static int run_model_check(const char *path)
{
    FILE *f = fopen(path, "r");
    Params p = { 0 };
    int64_t ns[MAX_HANDLERS] = { 0 };
    UnpatchedStep want = UNPATCHED_KEEP;
    int64_t want_old = 0, want_new = 0;
    unsigned lineno = 0, want_line = 0;
    uint64_t calls = 0, events[3] = { 0 };
    bool have_params = false;
    char *line = NULL;
    size_t size = 0;
    int nh = 0;

    if (!f) {
        fail("%s: %s", path, strerror(errno));
    }
    while (getline(&line, &size, f) >= 0) {
        char *q = line + strspn(line, " \t");
        const char *word;
        int64_t num[3];
        int n;

        lineno++;
        if (*q == '#' || *q == '\n' || *q == '\r' || *q == '\0') {
            continue;
        }
        n = split_record(q, &word, num);
        if (n == 3 && !strcmp(word, "params") && !have_params &&
            num[0] <= INT64_MAX / 4) {
            p = (Params) { .max_ns = num[0], .grow = num[1],
                           .shrink = num[2] };
            have_params = true;
        } else if (n == 3 && !strcmp(word, "adjust") && have_params &&
                   num[0] < MAX_HANDLERS) {
            int h = num[0];

            if (want != UNPATCHED_KEEP) {
                printf("FAIL %s:%u: the model emits %s %" PRId64 " -> %"
                       PRId64 " here, the recording nothing\n", path,
                       want_line, step_name[want], want_old, want_new);
                goto mismatch;
            }
            if (ns[h] != num[2]) {
                printf("FAIL %s:%u: handler %d polls for %" PRId64 " ns "
                       "in the model, %" PRId64 " ns in the recording\n",
                       path, lineno, h, ns[h], num[2]);
                goto mismatch;
            }
            want_old = ns[h];
            ns[h] = unpatched_adjust(ns[h], num[1], &p, &want);
            want_new = ns[h];
            want_line = lineno;
            nh = MAX(nh, h + 1);
            calls++;
        } else if (n == 2 && calls && (!strcmp(word, "grow") ||
                                       !strcmp(word, "shrink"))) {
            UnpatchedStep got = word[0] == 'g' ? UNPATCHED_GROW
                                               : UNPATCHED_SHRINK;

            if (got != want || num[0] != want_old || num[1] != want_new) {
                printf("FAIL %s:%u: the recording has %s %" PRId64 " -> %"
                       PRId64 ", the model %s", path, lineno, word, num[0],
                       num[1], step_name[want]);
                if (want != UNPATCHED_KEEP) {
                    printf(" %" PRId64 " -> %" PRId64, want_old, want_new);
                }
                printf("\n");
                goto mismatch;
            }
            events[got]++;
            want = UNPATCHED_KEEP;
        } else {
            fail("%s:%u: expected 'params MAX GROW SHRINK' first, then "
                 "'adjust HANDLER BLOCK_NS NS', 'grow OLD NEW' or "
                 "'shrink OLD NEW'", path, lineno);
        }
    }
    if (ferror(f)) {
        fail("%s: read error", path);
    }
    if (want != UNPATCHED_KEEP) {
        printf("FAIL %s:%u: the model emits %s %" PRId64 " -> %" PRId64
               " here, the recording nothing\n", path, want_line,
               step_name[want], want_old, want_new);
        goto mismatch;
    }
    if (!calls) {
        fail("%s: no 'adjust' lines", path);
    }
    printf("ok   %s: the model of 10.2.2 reproduces all %" PRIu64 " grow "
           "and %" PRIu64 " shrink events of %" PRIu64 " calls for %d "
           "handler(s) (poll-max-ns %" PRId64 ", poll-grow %" PRId64
           ", poll-shrink %" PRId64 ")\n", path, events[UNPATCHED_GROW],
           events[UNPATCHED_SHRINK], calls, nh, p.max_ns, p.grow, p.shrink);
    free(line);
    fclose(f);
    return 0;

mismatch:
    printf("FAIL %s: %" PRIu64 " grow and %" PRIu64 " shrink events "
           "matched before\n", path, events[UNPATCHED_GROW],
           events[UNPATCHED_SHRINK]);
    free(line);
    fclose(f);
    return 1;
}

static void usage(FILE *f)
{
    size_t i;

    fprintf(f,
"Usage: aio-poll-replay [OPTIONS] [TRACE...]\n"
"Replay aio_poll() event traces through the adaptive polling policies.\n"
"\n"
"TRACE is a file in the trace format ('<time_ns> <handler_id>' per line)\n"
"or synth:NAME; without any, all of the synthetic traces but 'steady'.\n"
"\n"
"  --max-ns N       poll-max-ns (default %d)\n"
"  --grow N         poll-grow (default 0: 2)\n"
"  --shrink N       poll-shrink (default 0: 2 in the series, reset to 0\n"
"                   in 10.2.2)\n"
"  --weights LIST   poll-weight values, comma separated (default 1,...,6)\n"
"  --csv FILE       write the results as CSV\n"
"  --frontier FILE  write the oracle's frontier as CSV\n"
"  --report FILE    write the markdown report to FILE, not stdout\n"
"  --gen NAME       write synthetic trace NAME to stdout and exit\n"
"  --check          check the pinned figures and exit\n"
"  --print-pins     with --check, print the current figures as pins\n"
"  --model-check FILE\n"
"                   check the model of 10.2.2 against FILE, a recording of\n"
"                   the adjust_polling_time() calls of a real 10.2.2 run\n"
"                   and of the grow and shrink events that they emitted,\n"
"                   and exit (may be given more than once)\n"
"  --dump N         print the first N iterations of each replay to stderr\n"
"  --priced         replay with priced wakeups: one CSV row per trace and\n"
"                   policy (to --csv FILE or stdout), with the references\n"
"                   never-poll, poll-to-max, best-fixed, optimum, and\n"
"                   best-fixed-lat and optimum-lat (the same within 1.05\n"
"                   times the added latency of unpatched)\n"
"  --clairvoyant    with --priced, also the best fixed polling time in\n"
"                   hindsight for each class of waits, by the previous\n"
"                   wait (clairvoyant-prev1), the previous two\n"
"                   (clairvoyant-prev2), each stretch of %d waits\n"
"                   (clairvoyant-window) and both (clairvoyant-window-\n"
"                   prev1): bounds on rules that know that much\n"
"  --edges-only     the best fixed polling times (best-fixed, best-fixed-lat,\n"
"                   the clairvoyant references) only among 0 and the\n"
"                   edges of patch 9's histogram bins, the times it can\n"
"                   choose, not among all of the trace's arrivals\n"
"  --no-references  with --priced, replay the policies only (optimum_cpu_ns\n"
"                   0)\n"
"  --no-stalls      read complete traces without their stalls (the waits\n"
"                   in which the recorded run was held past its polling\n"
"                   time, caught nothing or caught the event at the end),\n"
"                   as the replay did until 2026-12-02\n"
"  --timeout0-rule   the policy of patches 9-13 also leaves out the waits\n"
"                   whose timeout was 0 (cap_ns 0), as patch 15 does\n"
"  --cut-rule       the policy of patches 9-15 also leaves out the waits\n"
"                   whose polling ended before its time without progress\n"
"                   (need_wait(), or aio_notify() caught): the recorded\n"
"                   event was there when the fd wait began and the\n"
"                   recorded polling ended before its time and its cap\n"
"                   (an experiment, not a patch)\n"
"  --pending-rule   ... every wait whose recorded event was there when\n"
"                   the fd wait began (a bound, not a patch)\n"
"  --idle-rule      the policy of patches 9-15 also leaves out the waits\n"
"                   in which nothing ran while no timer was due (end t\n"
"                   with no cap), as patch 16 does\n"
"  --notifier H     with --idle-rule, also the waits whose only ready\n"
"                   handler is H, the AioContext's notifier; auto: in\n"
"                   each trace the handler that ends alone most waits\n"
"                   that neither slept nor ended by polling (at least\n"
"                   1%% of the iterations, over 10 times the waits that\n"
"                   it ends after sleeping), if any\n"
"  --context-rule K the policy of patches 9-13 with K histograms, for the\n"
"                   waits 0, 1, ..., K - 1 or more waits after the last\n"
"                   one longer than a wakeup's CPU, as a next patch\n"
"                   would (0: one, the default)\n"
"  --policy-sees-arrivals\n"
"                   the policy of patches 9-13 learns when the event of\n"
"                   each wait that it slept for came (the trace's\n"
"                   arrival), not the wait's end less its latency\n"
"  --class-report   with --context-rule and the references, per class of\n"
"                   clairvoyant-since-long, the online rule's polling and\n"
"                   cost beside the best fixed time for the same waits\n"
"                   and the cost of each time it can choose (stderr)\n"
"  --len-clamp      the policy of patches 9-13 counts a wait that polled\n"
"                   for all of its time and then found its event ready as\n"
"                   ending within that time (an experiment, not a patch)\n"
"  --fd-polled      every fd event as if its fd had io_poll(): polling\n"
"                   that reaches it ends the wait (what an io_poll() for\n"
"                   an NBD server's socket would buy; not in QEMU)\n"
"  --explore K      with --context-rule, every K-th wait of each class\n"
"                   polls for 0, and only those are counted (an\n"
"                   experiment, not a patch)\n"
"  --bandit K       with --context-rule, each class chooses among 0 and\n"
"                   the bin edges by the cost each was seen to have when\n"
"                   played (every K-th wait plays them in turn): no event\n"
"                   times needed (an experiment, not a patch)\n"
"  --bandit-max NS  with --bandit, only the times up to NS\n"
"  --bandit-hybrid  with --bandit, the positions whose waits an fd\n"
"                   without io_poll() ends less than half of the time\n"
"                   poll for the policy's one histogram's time, which\n"
"                   leaves out such waits\n"
"  --bandit-count-all\n"
"                   with --bandit-hybrid, that histogram counts every\n"
"                   wait, as the policy of patches 9-15 does\n"
"  --bandit-wakeup-cpu NS\n"
"                   with --bandit, its price of a wakeup's CPU, which\n"
"                   also tells a long wait (default the policy's)\n"
"  --bandit-near PCT\n"
"                   with --bandit, explore only the times whose cost so\n"
"                   far is within PCT percent of the cheapest's\n"
"  --no-after-recorded\n"
"                   let an event that the recorded run slept for arrive\n"
"                   at the end of its recorded polling, even where that\n"
"                   is within the replay's price of the same polling\n"
"                   time, as the replay did until 2026-12-04\n"
"  --no-arrivals    place the event of a slept wait at the wait's end\n"
"                   less the price's latency even where the trace has\n"
"                   the kernel's wakeup of that wait (arrive_ns)\n"
"  --policy-wakeup-cpu NS, --policy-wakeup-latency NS\n"
"                   the policy of patches 9-13 with these in place of\n"
"                   the tree's AIO_POLL_WAKEUP_NS and\n"
"                   AIO_POLL_WAKEUP_LATENCY_NS (a build calibrated to the\n"
"                   host); where they differ, the real\n"
"                   aio_adjust_polling_time() is not run beside it\n"
"  --wakeup-cpu NS  CPU time of one blocking wakeup (default %d)\n"
"  --wakeup-latency NS\n"
"                   latency of one blocking wakeup (default %d)\n"
"  --poll-entry NS  CPU time of entering and leaving poll mode, paid by\n"
"                   every iteration that polls, on top of its polling\n"
"                   (default 0); negative: the checks before polling,\n"
"                   inside the polling time, cost more (CPU only: where\n"
"                   polling ends does not move)\n"
"  --lockstep FILE  with --priced, write per trace and policy how many\n"
"                   iterations (after the first %d) recorded the polling\n"
"                   time that the recorded run's policy set, and in how\n"
"                   many the replay's equals it or is within 10%% of it,\n"
"                   as CSV (column skipped: the iterations not compared)\n"
"\n"
"Synthetic traces:\n", DEFAULT_MAX_NS, CLAIRVOYANT_WINDOW,
            DEFAULT_WAKEUP_CPU_NS, DEFAULT_WAKEUP_LATENCY_NS, LOCKSTEP_SKIP);
    for (i = 0; i < ARRAY_SIZE(synth); i++) {
        fprintf(f, "  %-8s %s\n", synth[i].name, synth[i].help);
    }
}

static int64_t parse_num(const char *opt, const char *arg)
{
    int64_t v;

    if (qemu_strtoi64(arg, NULL, 10, &v) || v < 0) {
        fail("%s: '%s' is not a non-negative integer", opt, arg);
    }
    return v;
}

static FILE *open_out(const char *path)
{
    FILE *f = fopen(path, "w");

    if (!f) {
        fail("%s: %s", path, strerror(errno));
    }
    return f;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "max-ns", required_argument, NULL, 'm' },
        { "grow", required_argument, NULL, 'g' },
        { "shrink", required_argument, NULL, 's' },
        { "weights", required_argument, NULL, 'w' },
        { "csv", required_argument, NULL, 'c' },
        { "frontier", required_argument, NULL, 'f' },
        { "report", required_argument, NULL, 'r' },
        { "gen", required_argument, NULL, 'G' },
        { "check", no_argument, NULL, 'C' },
        { "print-pins", no_argument, NULL, 'P' },
        { "model-check", required_argument, NULL, 'M' },
        { "dump", required_argument, NULL, 'd' },
        { "priced", no_argument, NULL, 'p' },
        { "wakeup-cpu", required_argument, NULL, 'W' },
        { "wakeup-latency", required_argument, NULL, 'L' },
        { "poll-entry", required_argument, NULL, 'E' },
        { "lockstep", required_argument, NULL, 'l' },
        { "no-references", no_argument, NULL, 'R' },
        { "no-stalls", no_argument, NULL, 'S' },
        { "timeout0-rule", no_argument, NULL, 'T' },
        { "cut-rule", no_argument, NULL, 'u' },
        { "pending-rule", no_argument, NULL, 'e' },
        { "idle-rule", no_argument, NULL, 'i' },
        { "notifier", required_argument, NULL, 'n' },
        { "no-after-recorded", no_argument, NULL, 'A' },
        { "no-arrivals", no_argument, NULL, 'N' },
        { "clairvoyant", no_argument, NULL, 'K' },
        { "edges-only", no_argument, NULL, 'B' },
        { "context-rule", required_argument, NULL, 'X' },
        { "policy-sees-arrivals", no_argument, NULL, 'Y' },
        { "policy-wakeup-cpu", required_argument, NULL, 'U' },
        { "policy-wakeup-latency", required_argument, NULL, 'V' },
        { "class-report", no_argument, NULL, 'Q' },
        { "len-clamp", no_argument, NULL, 'J' },
        { "explore", required_argument, NULL, 'Z' },
        { "bandit", required_argument, NULL, 'D' },
        { "bandit-max", required_argument, NULL, 'H' },
        { "bandit-hybrid", no_argument, NULL, 'O' },
        { "bandit-count-all", no_argument, NULL, 'j' },
        { "bandit-wakeup-cpu", required_argument, NULL, 'k' },
        { "bandit-near", required_argument, NULL, 'I' },
        { "fd-polled", no_argument, NULL, 'F' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    Params p = { .max_ns = DEFAULT_MAX_NS };
    Policy pols[2 + AIO_POLL_WEIGHT_MAX + 1];
    int npol = 0, ntr = 0, i, j, c;
    const char *csv = NULL, *frontier = NULL, *report = NULL;
    const char *lockstep = NULL;
    const char *weights = "1,2,3,4,5,6";
    bool check = false, print_pins = false, priced = false;
    Price price = { .cpu_ns = DEFAULT_WAKEUP_CPU_NS,
                    .lat_ns = DEFAULT_WAKEUP_LATENCY_NS };
    g_autofree const char **model_checks = g_new0(const char *, argc);
    int nmodel_checks = 0;
    TraceReport *tres;
    FILE *out, *ls;

    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'm':
            p.max_ns = parse_num("--max-ns", optarg);
            if (p.max_ns > INT64_MAX / 4) {
                fail("--max-ns: %s is too large", optarg);
            }
            break;
        case 'g':
            p.grow = parse_num("--grow", optarg);
            break;
        case 's':
            p.shrink = parse_num("--shrink", optarg);
            break;
        case 'w':
            weights = optarg;
            break;
        case 'c':
            csv = optarg;
            break;
        case 'f':
            frontier = optarg;
            break;
        case 'r':
            report = optarg;
            break;
        case 'G': {
            Trace *tr = trace_synth(optarg);

            trace_write(stdout, tr);
            trace_free(tr);
            return 0;
        }
        case 'C':
            check = true;
            break;
        case 'P':
            print_pins = true;
            break;
        case 'M':
            model_checks[nmodel_checks++] = optarg;
            break;
        case 'd':
            dump_iters = parse_num("--dump", optarg);
            break;
        case 'R':
            priced_references = false;
            break;
        case 'p':
            priced = true;
            break;
        case 'W':
            price.cpu_ns = parse_num("--wakeup-cpu", optarg);
            break;
        case 'S':
            stalls = false;
            break;
        case 'T':
            timeout0_rule = true;
            break;
        case 'u':
            cut_rule = true;
            break;
        case 'e':
            pending_rule = true;
            break;
        case 'i':
            idle_rule = true;
            break;
        case 'n':
            notifier_id = !strcmp(optarg, "auto") ? NOTIFIER_AUTO :
                          parse_num("--notifier", optarg);
            if (notifier_id > 63) {
                fail("--notifier must be a handler id, 0..63");
            }
            break;
        case 'A':
            after_recorded = false;
            break;
        case 'N':
            use_arrivals = false;
            break;
        case 'K':
            clairvoyant = true;
            break;
        case 'B':
            edges_only = true;
            break;
        case 'Y':
            policy_sees_arrivals = true;
            break;
        case 'Q':
            class_report = true;
            break;
        case 'J':
            len_clamp = true;
            break;
        case 'Z':
            explore_every = parse_num("--explore", optarg);
            break;
        case 'D':
            bandit_every = parse_num("--bandit", optarg);
            break;
        case 'H':
            bandit_max_ns = parse_num("--bandit-max", optarg);
            break;
        case 'O':
            bandit_hybrid = true;
            break;
        case 'j':
            bandit_count_all = true;
            break;
        case 'k':
            bandit_wakeup_ns = parse_num("--bandit-wakeup-cpu", optarg);
            break;
        case 'I':
            bandit_near = parse_num("--bandit-near", optarg);
            break;
        case 'F':
            fd_polled = true;
            break;
        case 'X':
            context_classes = parse_num("--context-rule", optarg);
            if (context_classes > CONTEXT_CLASSES_MAX) {
                fail("--context-rule: at most %d classes",
                     CONTEXT_CLASSES_MAX);
            }
            break;
        case 'U':
            policy_wakeup_ns = parse_num("--policy-wakeup-cpu", optarg);
            break;
        case 'V':
            policy_latency_ns = parse_num("--policy-wakeup-latency", optarg);
            break;
        case 'E':
            if (qemu_strtoi64(optarg, NULL, 10, &price.entry_ns)) {
                fail("--poll-entry: '%s' is not an integer", optarg);
            }
            break;
        case 'L':
            price.lat_ns = parse_num("--wakeup-latency", optarg);
            break;
        case 'l':
            lockstep = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (check) {
        return run_check(print_pins);
    }
    if (nmodel_checks) {
        int ret = 0;

        for (i = 0; i < nmodel_checks; i++) {
            ret |= run_model_check(model_checks[i]);
        }
        return ret;
    }

    if (class_report && (!context_classes || !priced || !priced_references)) {
        fail("--class-report needs --priced and --context-rule, and the "
             "references");
    }
    if (explore_every && !context_classes) {
        fail("--explore needs --context-rule");
    }
    if (bandit_wakeup_ns < 0) {
        bandit_wakeup_ns = policy_wakeup_ns;
    }
    if (bandit_every && (!context_classes || explore_every ||
                         bandit_every < 2)) {
        fail("--bandit K needs --context-rule, no --explore, and K >= 2");
    }
    if (bandit_hybrid && !bandit_every) {
        fail("--bandit-hybrid needs --bandit");
    }
    if (bandit_count_all && !bandit_hybrid) {
        fail("--bandit-count-all needs --bandit-hybrid");
    }

    pols[npol++] = (Policy) { POLICY_ORACLE };
    pols[npol++] = (Policy) { POLICY_UNPATCHED };
    {
        g_auto(GStrv) ws = g_strsplit(weights, ",", -1);

        for (i = 0; ws[i]; i++) {
            int64_t w = parse_num("--weights", ws[i]);

            if (w > AIO_POLL_WEIGHT_MAX || npol == ARRAY_SIZE(pols)) {
                fail("--weights: at most %d values in 0..%d",
                     AIO_POLL_WEIGHT_MAX + 1, AIO_POLL_WEIGHT_MAX);
            }
            pols[npol++] = (Policy) { POLICY_SERIES, w };
        }
    }

    tres = g_new0(TraceReport, MAX(argc - optind, (int)ARRAY_SIZE(synth)));
    if (optind == argc) {
        for (i = 0; i < ARRAY_SIZE(synth); i++) {
            if (synth[i].in_default_set) {
                tres[ntr++].tr = trace_synth(synth[i].name);
            }
        }
    }
    for (i = optind; i < argc; i++) {
        tres[ntr++].tr = trace_open(argv[i]);
    }

    if (priced) {
        g_autofree Trace **trs = g_new(Trace *, ntr);

        for (i = 0; i < ntr; i++) {
            trs[i] = tres[i].tr;
        }
        out = csv ? open_out(csv) : stdout;
        ls = lockstep ? open_out(lockstep) : NULL;
        run_priced(out, ls, trs, ntr, &p, pols, npol, &price);
        if (csv) {
            fclose(out);
        }
        if (ls) {
            fclose(ls);
        }
        for (i = 0; i < ntr; i++) {
            trace_free(tres[i].tr);
        }
        g_free(tres);
        return 0;
    }
    for (i = 0; i < ntr; i++) {
        if (tres[i].tr->complete) {
            fail("%s: a complete trace: replay it with --priced",
                 tres[i].tr->name);
        }
    }

    for (i = 0; i < ntr; i++) {
        frontier_init(&tres[i].f, tres[i].tr, &p);
        tres[i].res = g_new(Result, npol);
        for (j = 0; j < npol; j++) {
            tres[i].res[j] = replay(tres[i].tr, &p, &pols[j]);
        }
    }

    out = report ? open_out(report) : stdout;
    report_md(out, tres, ntr, pols, npol, &p);
    if (report) {
        fclose(out);
    }
    if (csv) {
        out = open_out(csv);
        report_csv(out, tres, ntr, pols, npol, &p);
        fclose(out);
    }
    if (frontier) {
        out = open_out(frontier);
        report_frontier(out, tres, ntr);
        fclose(out);
    }

    for (i = 0; i < ntr; i++) {
        g_free(tres[i].f.sum);
        g_free(tres[i].res);
        trace_free(tres[i].tr);
    }
    g_free(tres);
    return 0;
}
