# The poll-weight benchmark: ./apw bench [OPTIONS]; ./apw bench --help.
# Sourced by ./apw.  The runner, the guest builder and the report are
# Python 3 (stdlib + Debian's python3-matplotlib) under harness/bench/.

BENCH_PY=/usr/bin/python3
BENCH_DIR=$APW_ROOT/harness/bench
BENCH_ALL_VARIANTS="unpatched w0 w1 w2 w3 w4 floor upstream upstream-floor"
# --long: the run whose results are committed in results/bench-multidisk/
# (about 31 min on 2 idle cores): the 1-disk and both 8-disk guests, the
# saturating and the rate-limited job, every build beside its own floor,
# vCPU and IOThreads pinned apart, every venue in each round.
BENCH_LONG="--venue guest,guest8,guest8x2 --workloads sat,rate
 --variants unpatched,floor,w3,series-floor,upstream,upstream-floor
 --runs 7 --warmup 1 --runtime 4 --pin split --round-major"

bench_usage() {
    cat <<EOF
usage: ./apw bench [OPTIONS]

Measures IOPS, latency and host CPU per I/O of the poll-weight series
against the unpatched base, in these venues:
  guest     qemu-system-x86_64 -accel tcg boots a busybox+fio guest; fio
            runs on a virtio-blk disk (a host file, --aio, --cache) served by
            IOThread io1
  guest8    the same guest with 8 virtio-blk data disks (8 files, aio as
            --aio and --cache), all on IOThread io1; every fio job
            spreads its I/O over the 8 disks, numjobs 4
  guest8x2  the 8 disks split over IOThreads io1 and io2; the IOThread
            figures (CPU, context switches) are summed over both
  nbd       qemu-storage-daemon exports the file over NBD on a unix socket
            from IOThread io1; fio's nbd engine runs on the host
Workloads: randread 8k QD8 (saturating; numjobs 4 in the 8-disk guests)
and randread 8k QD1 at a fixed total rate (where polling can help
latency; numjobs 4 in the 8-disk guests, each at a quarter of the rate).
CPU (utime+stime) of the QEMU process and of the IOThread is taken over
fio's I/O window only.  Variants run round-robin, the order rotated each
round; one warm-up boot first.  report.md gives, per variant, the
per-round paired ratios to the floor and to unpatched with 95% intervals
and the verdict words (met, missed, not resolved).

Options:
  --long                   the long run of RESULTS.md (about 31 min):
                           $(echo $BENCH_LONG)
                           (options after --long override it)
  --venue LIST             comma list of guest, guest8, guest8x2, nbd;
                           both = guest,nbd (the default), multi =
                           guest8,guest8x2, all = every venue
  --variants LIST          comma list out of: $BENCH_ALL_VARIANTS
                           (default all of them)
                             unpatched  base build, IOThread defaults
                             wN         series build, poll-weight=N
                             floor      base build, poll-max-ns=0 (no polling)
                             upstream   QEMU 11.1.3 from Debian trixie-backports
                                        (./apw upstream), its defaults
                             upstream-floor  the same, poll-max-ns=0
                           and, not in the default: upN (upstream,
                           poll-weight=N), series-floor (series build,
                           poll-max-ns=0)
  --variant LABEL=DIR[:PROPS]
                           add a variant: DIR is base, series or a build
                           folder; PROPS is appended to
                           'iothread,id=io1,' (e.g. poll-max-ns=16384)
  --runs N                 measured rounds (default 3)
  --warmup N               warm-up boots, not reported (default 1)
  --runtime S              seconds of fio per job (default 10)
  --workloads LIST         sat,rate (default both); mix adds seed 001's
                           mix scaled to 2 cores: randread, randwrite,
                           read, write; 8k; QD8; numjobs 1 and 4
  --round-major            each round visits every venue before the next
                           round starts (a run cut short keeps every venue)
  --pin none|split|swap    split: pin the vCPU thread to the first CPU
                           and the IOThread(s) to the last one, after
                           boot (guest venues; default none); swap: the
                           IOThread(s) on the first CPU and the vCPU on
                           the last (here the disk's interrupts go to the
                           last CPU and count as CPU time of the thread
                           they interrupt: swap keeps them off the
                           IOThreads)
  --full-matrix            add the seeds' matrix: bs 8k/128k, iodepth 8,
                           numjobs 1/4/8/16, seq/rand, read/write
  --rate-iops G[,N]        rate of the QD1 job in the guest and over NBD
                           (default 1340,2000)
  --aio native|io_uring|threads
                           aio= of the data disks (default native)
  --cache direct|page      direct: cache.direct=on (default); page: the
                           host's page cache serves the data disks
                           (cache.direct=off, the files read in first),
                           so that a read completes in microseconds, where
                           polling can save a wakeup's latency; needs
                           --aio threads or io_uring
  --fio-args "OPTS"        extra fio options for every job, e.g.
                           "--ramp_time=2 --bs=4k" (no spaces in one option)
  --disk-mib N             size of the data disk file (default 256)
  --iter-trace             record each run's iteration trace (builds with
                           harness/replay/iter_trace.py only; ./apw evidence)
  --trace-events PATTERN   QEMU's trace events PATTERN in each run's
                           trace.log, e.g. poll_wakeup_price (the price
                           of a wakeup that the measured-price patch
                           logs, results/bench-multidisk/long-p16-intel;
                           harness/bench/price.py reads it); not with
                           --iter-trace
  --sched-wakeups          with --iter-trace, also the kernel's sched_waking
                           events of the IOThreads (tracefs; root): when
                           the event that ended a slept wait came
  --watchdog S             a boot, job or power-off that takes S s more
                           than the runtime is a hang: it is killed, its
                           device state saved, and retried once (default 120)
  --base-dir DIR           unpatched build (default work/BASE/base/build-all)
  --series-dir DIR         series build (default work/BASE/series/build-all)
  --out DIR                results (default work/BASE/bench/<timestamp>,
                           with work/BASE/bench/latest pointing at it)
  --report DIR             only remake report.md and the plots of DIR
  --dry-run                print the plan and stop
  --self-test              the offline tests of the parsing and the report
                           (no QEMU needed; a few seconds)
  -h, --help               this text

Output: samples.csv (one row per run and workload), report.md (tables and
ratios vs unpatched and vs floor), plots/*.png, raw/ (per-run console,
fio JSON, command lines, device state on hangs), meta.json.

A default run (9 variants, both venues, 2 workloads, 1+3 rounds, 10 s) is
about 23 minutes on 2 idle cores by the plan it prints (guest ~13 min, NBD
~10 min), and needs the upstream root (./apw upstream).  Keep the
host otherwise idle: a build on the same cores spoils the figures.  Each
run records the CPU that other processes took during its window, and the
report warns when that passes 40% of a core.
EOF
}

# bench_first GLOB...: the first of the matches that exists, or nothing.
bench_first() {
    local f
    for f in "$@"; do
        [ -e "$f" ] && { echo "$f"; return 0; }
    done
    return 0
}

# Guest assets in $APW_CACHE/guest, downloaded once: Debian's kernel,
# busybox-static and seabios (apt-get download; nothing is installed), and
# the initramfs built from them and the host's fio.
bench_guest() {
    local g=$APW_CACHE/guest kdeb bdeb sdeb kpkg stamp tmp
    mkdir -p "$g/debs"
    kdeb=$(bench_first "$g"/debs/linux-image-*_amd64.deb)
    bdeb=$(bench_first "$g"/debs/busybox-static_*.deb)
    sdeb=$(bench_first "$g"/debs/seabios_*.deb)
    if [ -z "$kdeb" ] || [ -z "$bdeb" ] || [ -z "$sdeb" ]; then
        kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
            awk '$1 == "Depends:" && $2 ~ /^linux-image-/ && !n++ { print $2 }')
        if [ -z "$kpkg" ]; then
            apt-get -qq update >/dev/null || die "apt-get update failed"
            kpkg=$(apt-cache depends linux-image-amd64 |
                awk '$1 == "Depends:" && $2 ~ /^linux-image-/ && !n++ { print $2 }')
        fi
        [ -n "$kpkg" ] || die "cannot tell which kernel linux-image-amd64 is"
        say "downloading the guest's $kpkg, busybox-static and seabios"
        (cd "$g/debs" && apt-get -qq download "$kpkg" busybox-static seabios \
            2>&1 | grep -v '^W: Download is performed unsandboxed' >&2) || true
        kdeb=$(bench_first "$g"/debs/linux-image-*_amd64.deb)
        bdeb=$(bench_first "$g"/debs/busybox-static_*.deb)
        sdeb=$(bench_first "$g"/debs/seabios_*.deb)
        [ -n "$kdeb" ] && [ -n "$bdeb" ] && [ -n "$sdeb" ] ||
            die "apt-get download of the guest packages failed"
    fi
    [ -x /usr/bin/fio ] || die "no /usr/bin/fio: install fio"
    # Rebuild when any input changes: the packages, fio, or the guest code.
    stamp=$( (basename "$kdeb"; basename "$bdeb"; basename "$sdeb";
              /usr/bin/fio --version;
              cat "$BENCH_DIR/init.sh" "$BENCH_DIR/apwmark" "$BENCH_DIR/guest.py") |
            sha256sum | cut -c1-16)
    if [ "$(cat "$g/stamp" 2>/dev/null)" = "$stamp" ] &&
       [ -f "$g/vmlinuz" ] && [ -f "$g/initramfs.cpio" ] &&
       [ -f "$g/bios/bios-256k.bin" ]; then
        return 0
    fi
    say "building the guest (kernel, initramfs with busybox and fio) in $g"
    tmp=$(mktemp -d "$g/tmp.XXXXXX")
    dpkg-deb -x "$kdeb" "$tmp/k" || die "cannot unpack $kdeb"
    dpkg-deb -x "$bdeb" "$tmp/b" || die "cannot unpack $bdeb"
    dpkg-deb -x "$sdeb" "$tmp/s" || die "cannot unpack $sdeb"
    mkdir -p "$g/bios"
    cp "$tmp/s/usr/share/seabios/bios-256k.bin" "$g/bios/"
    cp "$(bench_first "$tmp"/k/boot/vmlinuz-*)" "$g/vmlinuz"
    "$BENCH_PY" "$BENCH_DIR/guest.py" --kernel-root "$tmp/k" \
        --busybox "$tmp/b/bin/busybox" --out "$g/initramfs.cpio" \
        --vmlinux-out "$g/vmlinux" ||
        { rm -rf "$tmp"; die "building the initramfs failed"; }
    basename "$kdeb" > "$g/kernel-package"
    rm -rf "$tmp"
    echo "$stamp" > "$g/stamp"
}

# The data disk: a file of random data on the work folder's file system
# (ext4 here; O_DIRECT must work there).  Made once per size.
# bench_disk MIB [SUFFIX]: one more file per suffix (the multi-disk venues'
# disks are disk-MIBM-m0.img .. -m7.img).
bench_disk() {
    local mib=$1 f=$BW/bench/disk-${1}M${2:+-$2}.img
    if [ ! -f "$f" ] || [ "$(stat -c %s "$f")" != $((mib * 1048576)) ]; then
        mkdir -p "$BW/bench"
        say "writing the ${mib} MiB data disk $f" >&2
        dd if=/dev/urandom of="$f.tmp" bs=1M count="$mib" status=none ||
            die "cannot write $f"
        mv "$f.tmp" "$f"
    fi
    dd if="$f" of=/dev/null bs=4096 count=1 iflag=direct status=none ||
        die "O_DIRECT does not work on $f"
    echo "$f"
}

bench_deps() {
    local need
    need=$(deps_missing $(grep -v -e '^#' -e '^[[:space:]]*$' "$APW_ROOT/harness/bench-deps"))
    [ -z "$need" ] && return 0
    [ "$(id -u)" = 0 ] || die "missing packages ($need): run as root or install them"
    say "installing$need"
    export DEBIAN_FRONTEND=noninteractive
    apt-get -qq install -y --no-install-recommends $need >/dev/null 2>&1 || {
        apt-get -qq update >/dev/null
        apt-get -qq install -y --no-install-recommends $need >/dev/null
    } || die "apt-get install failed for:$need"
}

# bench_variant_spec NAME: LABEL=DIR[:PROPS] for a known variant name.
bench_variant_spec() {
    case "$1" in
    unpatched) echo "unpatched=$BENCH_BASE_DIR" ;;
    floor) echo "floor=$BENCH_BASE_DIR:poll-max-ns=0" ;;
    w[0-9]|w[0-9][0-9]) echo "$1=$BENCH_SERIES_DIR:poll-weight=${1#w}" ;;
    series-floor) echo "series-floor=$BENCH_SERIES_DIR:poll-max-ns=0" ;;
    upstream|upstream-floor|up[0-9]|up[0-9][0-9])
        upstream_ensure >&2 || exit 1
        case "$1" in
        upstream) echo "upstream=$UPSTREAM_BIN" ;;
        upstream-floor) echo "upstream-floor=$UPSTREAM_BIN:poll-max-ns=0" ;;
        *) echo "$1=$UPSTREAM_BIN:poll-weight=${1#up}" ;;
        esac ;;
    *) die "unknown variant '$1' (known: $BENCH_ALL_VARIANTS, wN; or --variant LABEL=DIR[:PROPS])" ;;
    esac
}

bench_dir_of() {
    case "$1" in
    base) echo "$BENCH_BASE_DIR" ;;
    series) echo "$BENCH_SERIES_DIR" ;;
    *) (cd "$1" 2>/dev/null && pwd) || die "no build folder $1" ;;
    esac
}

cmd_bench() {
    local cmdline="$*"
    local venue=both variants=$BENCH_ALL_VARIANTS runs=3 warmup=1 runtime=10
    local workloads=sat,rate full= rate=1340,2000 aio=native cache=direct mib=256
    local watchdog=120 fio_args= out= report_only= dry= custom=() specs=() v spec dir
    local iter_trace= pin=none round_major= sched_wakeups= trace_events=
    BENCH_BASE_DIR=$BW/base/build-all
    BENCH_SERIES_DIR=$BW/series/build-all
    while [ $# -gt 0 ]; do
        case "$1" in
        -h|--help) bench_usage; return 0 ;;
        --long) shift; set -- $BENCH_LONG "$@"; continue ;;
        --venue) venue=${2:?}; shift ;;
        --variants) variants=$(echo "${2?}" | tr , ' '); shift ;;
        --variant) custom+=("${2:?}"); shift ;;
        --runs) runs=${2:?}; shift ;;
        --warmup) warmup=${2:?}; shift ;;
        --runtime) runtime=${2:?}; shift ;;
        --workloads) workloads=${2:?}; shift ;;
        --full-matrix) full=--full-matrix ;;
        --rate-iops) rate=${2:?}; shift ;;
        --aio) aio=${2:?}; shift ;;
        --cache) cache=${2:?}; shift ;;
        --fio-args) fio_args=${2?}; shift ;;
        --iter-trace) iter_trace=--iter-trace ;;
        --trace-events) trace_events=${2:?}; shift ;;
        --sched-wakeups) sched_wakeups=--sched-wakeups ;;
        --pin) pin=${2:?}; shift ;;
        --round-major) round_major=--round-major ;;
        --disk-mib) mib=${2:?}; shift ;;
        --watchdog) watchdog=${2:?}; shift ;;
        --base-dir) BENCH_BASE_DIR=$(bench_dir_of "${2:?}"); shift ;;
        --series-dir) BENCH_SERIES_DIR=$(bench_dir_of "${2:?}"); shift ;;
        --out) out=${2:?}; shift ;;
        --report) report_only=${2:?}; shift ;;
        --dry-run) dry=1 ;;
        --self-test)
            "$BENCH_PY" -m unittest discover -s "$BENCH_DIR" -p 'test_*.py'
            return ;;
        *) die "unknown bench option '$1' (./apw bench --help)" ;;
        esac
        shift
    done
    if [ -n "$report_only" ]; then
        "$BENCH_PY" "$BENCH_DIR/report.py" "$report_only"
        return
    fi
    case "$venue" in
    both) venue=guest,nbd ;;
    multi) venue=guest8,guest8x2 ;;
    all) venue=guest,guest8,guest8x2,nbd ;;
    esac
    for v in ${venue//,/ }; do
        case "$v" in guest|guest8|guest8x2|nbd) ;;
        *) die "unknown venue '$v' (guest, guest8, guest8x2, nbd; both, multi, all)" ;;
        esac
    done
    case "$pin" in none|split|swap) ;; *) die "--pin must be none, split or swap" ;; esac
    case "$aio" in native|io_uring|threads) ;; *) die "--aio must be native, io_uring or threads" ;; esac
    case "$cache" in direct|page) ;; *) die "--cache must be direct or page" ;; esac
    [ "$cache:$aio" != page:native ] ||
        die "--cache page needs --aio threads or io_uring (aio=native requires cache.direct=on)"
    for v in runs warmup runtime mib watchdog; do
        [[ ${!v} =~ ^[0-9]+$ ]] || die "--$v wants a number, not '${!v}'"
    done
    [ "$runs" -ge 1 ] && [ "$runtime" -ge 1 ] || die "--runs and --runtime must be >= 1"
    [[ $rate =~ ^[0-9]+(,[0-9]+)?$ ]] || die "--rate-iops wants G or G,N"
    for v in ${workloads//,/ }; do
        case "$v" in sat|rate|mix) ;; *) die "unknown workload '$v' (sat, rate, mix)" ;; esac
    done
    [ -n "${workloads//,/}" ] || [ -n "$full" ] || die "no workloads"

    for v in $variants; do specs+=("$(bench_variant_spec "$v")") || exit 1; done
    for spec in "${custom[@]}"; do
        [[ $spec =~ ^[A-Za-z0-9_.-]+=[^:]+(:.*)?$ ]] ||
            die "bad --variant '$spec' (LABEL=DIR[:PROPS])"
        dir=${spec#*=}; dir=${dir%%:*}
        spec=${spec%%=*}=$(bench_dir_of "$dir")${spec#*=$dir}
        specs+=("$spec")
    done
    [ ${#specs[@]} -gt 0 ] || die "no variants"

    local nv=${#specs[@]} nw=0 est ng=0 gv
    [[ $workloads == *sat* ]] && nw=$((nw + 1))
    [[ $workloads == *rate* ]] && nw=$((nw + 1))
    [[ $workloads == *mix* ]] && nw=$((nw + 8))
    [ -n "$full" ] && nw=$((nw + 31))
    est=0
    for gv in ${venue//,/ }; do [[ $gv == guest* ]] && ng=$((ng + 1)); done
    # Measured on 2 idle cores: a guest boot costs about 5 s plus 1 s of
    # fio start-up per job; NBD about 0.6 s per job.
    est=$((est + ng * (warmup + runs * nv) * (5 + nw * (runtime + 1))))
    [[ $venue == *nbd* ]] && est=$((est + (warmup + runs * nv) * (1 + nw * runtime)))
    say "plan: venues $venue; variants: ${specs[*]}"
    say "plan: workloads $workloads${full:+ + full matrix}, $warmup warm-up + $runs rounds of ${runtime} s; about $((est / 60 + 1)) min"
    # Every variant's binaries must be there before anything runs.
    local need_sys= need_qsd= bin
    [[ $venue == *guest* ]] && need_sys=1
    [[ $venue == *nbd* ]] && need_qsd=1
    for spec in "${specs[@]}"; do
        dir=${spec#*=}; dir=${dir%%:*}
        bin=$dir/qemu-system-x86_64
        [ -z "$need_sys" ] || [ -x "$bin" ] ||
            die "variant ${spec%%=*}: no $bin (build it: ./apw build [--unpatched] all)"
        [ -z "$need_sys" ] || [ -f "$dir/pc-bios/optionrom/linuxboot_dma.bin" ] ||
            die "variant ${spec%%=*}: no option ROMs in $dir/pc-bios/optionrom (make -C there)"
        bin=$dir/storage-daemon/qemu-storage-daemon
        [ -z "$need_qsd" ] || [ -x "$bin" ] ||
            die "variant ${spec%%=*}: no $bin (build it: ./apw build [--unpatched] all)"
    done

    [ -z "$dry" ] || return 0

    bench_deps
    [[ $venue == *guest* ]] && bench_guest
    local disk disks= i
    disk=$(bench_disk "$mib")
    if [[ $venue == *guest8* ]]; then
        for i in 0 1 2 3 4 5 6 7; do
            disks=${disks:+$disks,}$(bench_disk "$mib" "m$i")
        done
    fi

    local stamp latest=
    stamp=$(date +%Y%m%d-%H%M%S)
    if [ -z "$out" ]; then
        out=$BW/bench/$stamp
        latest=1
    fi
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    if [ -n "$latest" ]; then
        ln -sfn "$stamp" "$BW/bench/latest"
    fi
    local args=() labels=()
    for spec in "${specs[@]}"; do
        dir=${spec#*=}; dir=${dir%%:*}
        args+=(--variant "$spec" --meta "source ${spec%%=*}=$(bench_tree_rev "$dir")")
        labels+=("${spec%%=*}")
    done
    [[ $venue != *guest* ]] || args+=(--meta "guest=$(cat "$APW_CACHE/guest/kernel-package") ($( [ -f "$APW_CACHE/guest/vmlinux" ] && echo "ELF, PVH boot" || echo bzImage)), -M pc -accel tcg -m 1024, initramfs with busybox and Debian's fio")
    args+=(--meta "command=./apw bench $cmdline")
    # QMP goes through qemu.qmp of the series tree (harness/lib/qmpclient.py)
    [ ! -d "$TREE/python/qemu/qmp" ] || args+=(--qemu-src "$TREE")
    local t0 rc=0
    t0=$(date +%s)
    "$BENCH_PY" "$BENCH_DIR/run.py" --out "$out" --venues "$venue" \
        --runs "$runs" --warmup "$warmup" --runtime "$runtime" \
        --workloads "$workloads" $full --watchdog "$watchdog" \
        --rate-iops-guest "${rate%%,*}" --rate-iops-nbd "${rate##*,}" \
        --aio "$aio" --cache "$cache" --fio-args="$fio_args" --disk "$disk" $iter_trace $sched_wakeups \
        --trace-events "$trace_events" \
        --disks "$disks" --pin "$pin" $round_major \
        --kernel "$(bench_first "$APW_CACHE/guest/vmlinux" "$APW_CACHE/guest/vmlinuz")" \
        --initrd "$APW_CACHE/guest/initramfs.cpio" \
        --bios-dir "$APW_CACHE/guest/bios" "${args[@]}" || rc=$?
    say "benchmark took $(( $(date +%s) - t0 )) s; results in $out"
    [ -s "$out/samples.csv" ] || die "no samples were written"
    "$BENCH_PY" "$BENCH_DIR/report.py" "$out" --order "$(IFS=,; echo "${labels[*]}")"
    if [[ " ${labels[*]}" == *" up"* ]]; then
        "$BENCH_PY" "$APW_ROOT/harness/upstream/policy.py" "$out" \
            --out "$out/upstream.md" > /dev/null &&
            say "upstream beside the series, each against its own floor: $out/upstream.md"
    fi
    case "$rc" in
    0) ;;
    2) die "some variants could not run (see the warnings above and the error rows in $out/samples.csv)" ;;
    *) die "the runner failed (rc $rc)" ;;
    esac
}

# What a build folder was built from: the series tree's HEAD, or "base".
bench_tree_rev() {
    local d=$1 src
    if [ "$d" = "$UPSTREAM_BIN" ]; then
        echo "Debian qemu-system-x86 $(upstream_version) (trixie-backports)"
        return
    fi
    src=$(sed -n "s/^SRC_PATH=//p" "$d/config-host.mak" 2>/dev/null | head -n 1)
    [ -z "$src" ] && src=$(dirname "$d")/src
    if [ -d "$src/.git" ]; then
        echo "tree $(git -C "$src" describe --always --tags 2>/dev/null)$( [ -z "$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null)" ] || echo ' +uncommitted')$( [ ! -f "$d/price-build.txt" ] || echo ", a diagnostic build with $(head -n 1 "$d/price-build.txt")")"
    else
        echo "pristine $(cat "$src/VERSION" 2>/dev/null || echo "$APW_BASE")"
    fi
}

# ./apw bench-bases [BENCH-OPTS]: one interleaved run of unpatched, the
# series at the default weight (w3) and the floor of every base, then the
# side-by-side table of bench/bases.py (bases.md in the run's folder).
cmd_bench_bases() {
    local b first='' w out bases=''
    local vargs=()
    for b in $APW_BASES; do
        w=$APW_WORK/$b
        [ -x "$w/base/build-all/qemu-system-x86_64" ] && [ -x "$w/series/build-all/qemu-system-x86_64" ] ||
            die "bench-bases: build base $b first: ./apw --base $b build --unpatched all && ./apw --base $b build all"
        if [ -z "$first" ]; then
            first=$b
            [ "$b" = "$APW_BASE" ] || die "bench-bases: run it with the default base ($b)"
            vargs+=(--variants unpatched,w3,floor)
        else
            vargs+=(--variant "unpatched-$b=$w/base/build-all"
                    --variant "w3-$b=$w/series/build-all:poll-weight=3"
                    --variant "floor-$b=$w/base/build-all:poll-max-ns=0")
        fi
        bases=${bases:+$bases,}$b
    done
    out=$APW_WORK/bench-bases/$(date +%Y%m%d-%H%M%S)
    cmd_bench "${vargs[@]}" --out "$out" "$@"
    [ -f "$out/samples.csv" ] || return 0   # --dry-run, --help
    "$BENCH_PY" "$BENCH_DIR/bases.py" "$out" --bases "$bases" --out "$out/bases.md"
    ln -sfn "$(basename "$out")" "$APW_WORK/bench-bases/latest"
    say "side-by-side table: $out/bases.md"
}
