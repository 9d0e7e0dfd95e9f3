#!/bin/sh
# /init of the apw benchmark guest (busybox, Debian's kernel and fio).
#
# Reads its jobs from fw_cfg (opt/apw/jobs): one job per line,
# "NAME FIO-ARGS...".  Each job runs fio on /dev/vda; the serial console
# carries, per job:
#   APW-JOB NAME                      the job is about to start
#   APW-FIO-START NAME                fio's exec_prerun (the I/O starts)
#   APW-FIO-END NAME                  fio's exec_postrun (the I/O ended)
#   APW-JSON-BEGIN NAME rc=N          fio's JSON output follows
#   APW-JSON-END NAME
# and APW-DONE before the guest powers off.  With numjobs > 1 the
# START/END markers come once per clone.
export PATH=/usr/bin:/bin:/sbin
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
/bin/busybox --install -s /bin
mkdir -p /tmp
cd /tmp

fail() {
    echo "APW-ERROR $*"
    poweroff -f
}

for m in $(cat /apw/modules); do
    insmod "/apw/mod/$m.ko" || fail "insmod $m"
done

jobs=/sys/firmware/qemu_fw_cfg/by_name/opt/apw/jobs/raw
i=0
while [ ! -b /dev/vda ] || [ ! -f "$jobs" ]; do
    i=$((i + 1))
    [ $i -lt 100 ] || fail "no /dev/vda or no $jobs"
    sleep 0.1
done
cat "$jobs" > /tmp/jobs
echo "APW-BOOTED $(cat /proc/uptime)"

while read -r name args; do
    [ -n "$name" ] || continue
    echo "APW-JOB $name"
    rm -f "/tmp/$name.json"
    # Word splitting of $args is intended: the host writes plain options.
    fio --output-format=json --output="/tmp/$name.json" --name="$name" \
        --filename=/dev/vda \
        --exec_prerun="/bin/apwmark APW-FIO-START $name" \
        --exec_postrun="/bin/apwmark APW-FIO-END $name" \
        $args > "/tmp/$name.log" 2>&1
    rc=$?
    echo "APW-JSON-BEGIN $name rc=$rc"
    cat "/tmp/$name.json"
    [ $rc = 0 ] || tail -n 20 "/tmp/$name.log"
    echo "APW-JSON-END $name"
done < /tmp/jobs

echo "APW-DONE $(cat /proc/uptime)"
poweroff -f
