# Fetch the base's orig tarball from Debian's archive with apt-get source,
# through a private apt configuration that leaves the machine's own sources
# alone, and check its sha256.  Sourced by ./apw.

sha_ok() {
    [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$ORIG_SHA256" ]
}

cmd_fetch() {
    local dl=$APW_CACHE/dl tarball=$APW_CACHE/$ORIG_TARBALL apt etc lists f
    mkdir -p "$APW_CACHE" || die "cannot create cache folder $APW_CACHE"
    if [ -n "${APW_TARBALL:-}" ]; then
        sha_ok "$APW_TARBALL" ||
            die "APW_TARBALL=$APW_TARBALL is missing or its sha256 is not $ORIG_SHA256"
        cp "$APW_TARBALL" "$tarball.tmp" && mv "$tarball.tmp" "$tarball"
    fi
    if sha_ok "$tarball"; then
        return 0
    fi
    rm -f "$tarball"
    say "fetching qemu $DEB_VERSION source from Debian's archive ($DEB_SUITE)"
    apt=$APW_CACHE/apt
    etc=$apt/etc
    lists=$apt/lists
    mkdir -p "$etc" "$lists/partial" "$dl"
    cat > "$etc/sources.list" <<EOF
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $DEB_SUITE main
EOF
    set -- -o Dir::Etc::SourceList="$etc/sources.list" \
           -o Dir::Etc::SourceParts=/dev/null \
           -o Dir::State::Lists="$lists" \
           -o Dir::Cache="$apt/cache" \
           -o APT::Get::List-Cleanup=0 \
           -o Debug::NoLocking=1
    apt-get -qq "$@" update >/dev/null 2>"$apt/update.log" ||
        die "apt-get update against Debian $DEB_SUITE failed (see $apt/update.log)"
    rm -f "$dl"/*
    (cd "$dl" && apt-get -qq "$@" source --download-only "qemu=$DEB_VERSION") \
        >"$apt/source.log" 2>&1 || die "Debian's archive no longer serves qemu $DEB_VERSION ($apt/source.log). If you have $ORIG_TARBALL, run again with APW_TARBALL=/path/to/$ORIG_TARBALL"
    f=$dl/$ORIG_TARBALL
    [ -f "$f" ] || die "apt-get source gave no $ORIG_TARBALL"
    sha_ok "$f" || die "sha256 of $ORIG_TARBALL is wrong: got $(sha256sum "$f" | cut -d' ' -f1), want $ORIG_SHA256"
    mv "$f" "$tarball"
    rm -rf "$dl"
}
