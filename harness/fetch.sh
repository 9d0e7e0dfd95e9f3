# Fetch the base's Debian source package (the orig tarball, the .dsc and the
# debian tarball) from Debian's archive with apt-get source, through a
# private apt configuration that leaves the machine's own sources alone,
# and check their sha256 (pinned in base_vars).  The orig tarball is the
# QEMU tree; the .dsc and the debian tarball are Debian's packaging, for
# the check that the series applies on Debian's own patch stack.
# Sourced by ./apw.

# sha_ok FILE [SHA256]: FILE exists and has that sha256 (default: the orig
# tarball's).
sha_ok() {
    [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "${2:-$ORIG_SHA256}" ]
}

# The three files of the source package, each with its pinned sha256.
source_files() {
    printf '%s %s\n' "$ORIG_TARBALL" "$ORIG_SHA256" \
        "$DEB_DSC" "$DSC_SHA256" "$DEB_TARBALL" "$DEB_TARBALL_SHA256"
}

source_cached() {
    local f sha
    while read -r f sha; do
        sha_ok "$APW_CACHE/$f" "$sha" || return 1
    done < <(source_files)
}

cmd_fetch() {
    local tarball=$APW_CACHE/$ORIG_TARBALL
    mkdir -p "$APW_CACHE" || die "cannot create cache folder $APW_CACHE"
    if [ -n "${APW_TARBALL:-}" ]; then
        sha_ok "$APW_TARBALL" ||
            die "APW_TARBALL=$APW_TARBALL is missing or its sha256 is not $ORIG_SHA256"
        cp "$APW_TARBALL" "$tarball.tmp" && mv "$tarball.tmp" "$tarball"
        # The tree needs only the orig tarball; Debian's packaging files
        # are fetched if the archive still serves them.
        source_cached || (fetch_archive) ||
            echo "apw: warning: no Debian packaging files for $APW_BASE; the Debian patch stack check will fail" >&2
        return 0
    fi
    source_cached && return 0
    fetch_archive
}

# Fetches share the apt state folders: one at a time.  The lock is held in
# a subshell, for the fetch only: an fd of the caller's shell would stay
# locked for the rest of its run, and in every child it starts (the upstream
# root made in the background), and keep another base's fetch waiting.
fetch_archive() {
    mkdir -p "$APW_CACHE/apt"
    (
        flock 9
        source_cached && exit 0
        fetch_archive_locked
    ) 9> "$APW_CACHE/apt/lock"
}

fetch_archive_locked() {
    local dl=$APW_CACHE/dl apt=$APW_CACHE/apt etc lists f sha
    etc=$apt/etc
    lists=$apt/lists
    mkdir -p "$etc" "$lists/partial" "$dl"
    say "fetching qemu $DEB_VERSION source from Debian's archive ($DEB_SUITE)"
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
    # A cached orig tarball is not downloaded again: apt-get source keeps a
    # file of the right hash that is already there.
    ! sha_ok "$APW_CACHE/$ORIG_TARBALL" || ln -f "$APW_CACHE/$ORIG_TARBALL" "$dl/" 2>/dev/null ||
        cp "$APW_CACHE/$ORIG_TARBALL" "$dl/"
    (cd "$dl" && apt-get -qq "$@" source --download-only "qemu=$DEB_VERSION") \
        >"$apt/source.log" 2>&1 || die "Debian's archive no longer serves qemu $DEB_VERSION ($apt/source.log). If you have $ORIG_TARBALL, run again with APW_TARBALL=/path/to/$ORIG_TARBALL"
    while read -r f sha; do
        [ -f "$dl/$f" ] || die "apt-get source gave no $f"
        sha_ok "$dl/$f" "$sha" || die "sha256 of $f is wrong: got $(sha256sum "$dl/$f" | cut -d' ' -f1), want $sha"
    done < <(source_files)
    while read -r f sha; do
        if ! sha_ok "$APW_CACHE/$f" "$sha"; then
            cp "$dl/$f" "$APW_CACHE/$f.tmp" && mv -f "$APW_CACHE/$f.tmp" "$APW_CACHE/$f"
        fi
    done < <(source_files)
    rm -rf "$dl"
}
