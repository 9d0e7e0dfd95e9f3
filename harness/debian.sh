# ./apw debian-stack: the series on Debian's own patch stack.  Unpacks the
# base's Debian source package (dpkg-source -x, which applies
# debian/patches), adds the series to debian/patches/series and has quilt
# apply all of it, Debian's patches and the series, without fuzz.
# README's "For packagers" gives the same steps by hand.  Sourced by ./apw.

cmd_debian_stack() {
    local d=$BW/debian pkg p n=0
    source_cached || cmd_fetch
    source_cached || die "Debian's source package for $APW_BASE is not in $APW_CACHE"
    rm -rf "$d"
    mkdir -p "$d"
    for p in "$ORIG_TARBALL" "$DEB_DSC" "$DEB_TARBALL"; do
        ln -s "$APW_CACHE/$p" "$d/$p"
    done
    pkg=$d/qemu-${APW_BASE}
    say "dpkg-source -x $DEB_DSC (Debian's patches applied)"
    (cd "$d" && dpkg-source -x "$DEB_DSC" "$pkg") > "$d/dpkg-source.log" 2>&1 || {
        cat "$d/dpkg-source.log"
        die "dpkg-source -x $DEB_DSC failed"
    }
    [ -f "$pkg/debian/patches/series" ] || die "$DEB_DSC has no debian/patches/series"
    echo "Debian's own patches: $(grep -cv -e '^#' -e '^[[:space:]]*$' "$pkg/debian/patches/series")"
    mkdir -p "$pkg/debian/patches/aio-poll-weight"
    for p in $(series_list); do
        cp "$PATCHES/$p" "$pkg/debian/patches/aio-poll-weight/$p"
        echo "aio-poll-weight/$p" >> "$pkg/debian/patches/series"
        n=$((n + 1))
    done
    echo "series patches appended: $n"
    export QUILT_PATCHES=debian/patches QUILT_PC=.pc
    # dpkg-source applied Debian's patches (its .pc is quilt's); quilt
    # pushes the series on top, without fuzz, as dpkg-source would.
    (cd "$pkg" && quilt push -a --fuzz=0) || die "quilt push -a of the series failed on Debian's stack"
    [ "$(cd "$pkg" && quilt applied | wc -l)" = "$(cd "$pkg" && quilt series | wc -l)" ] ||
        die "quilt did not apply every patch"
    (cd "$pkg" && quilt applied | tail -n "$n") | grep -q . || die "no series patch applied"
    say "quilt applied all $(cd "$pkg" && quilt series | wc -l) patches ($n of the series) on $DEB_VERSION"
}
