# The generated QEMU tree: the pristine base as one commit, then patches/
# applied with git am.  Export writes the tree's commits back to patches/.
# Sourced by ./apw.

# Fixed dates make the base commit, and so every hash above it, the same on
# every machine.
BASE_DATE='2026-01-01T00:00:00Z'
FORMAT_PATCH_OPTS='--zero-commit --no-signature --cover-letter'

series_list() {
    [ -f "$PATCHES/series" ] || die "no $PATCHES/series file"
    grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series"
}

# Extract the pristine base into $1 and commit it.
make_base_tree() {
    local dir=$1 tarball=$APW_CACHE/$ORIG_TARBALL
    sha_ok "$tarball" || cmd_fetch
    rm -rf "$dir"
    mkdir -p "$dir"
    tar -xf "$tarball" -C "$dir" --strip-components=1 ||
        die "cannot unpack $tarball"
    (
        cd "$dir"
        git init -q -b work
        git add -A -f .
        GIT_AUTHOR_DATE=$BASE_DATE GIT_COMMITTER_DATE=$BASE_DATE \
            git_team commit -q --no-verify \
            -m "QEMU $APW_BASE (Debian $ORIG_TARBALL, $DEB_VERSION)"
        git tag base
    )
    envfix_apply "$dir"
}

# Build-environment fixes: untracked files only, excluded from git, so that
# they never reach the series.  See harness/envfix/README.
envfix_apply() {
    local dir=$1 f
    [ -d "$ENVFIX/$APW_BASE" ] || return 0
    (cd "$ENVFIX/$APW_BASE" && find . -type f ! -name '*.sh' ! -name README) | while read -r f; do
        f=${f#./}
        mkdir -p "$dir/$(dirname "$f")"
        cp "$ENVFIX/$APW_BASE/$f" "$dir/$f"
        [ ! -d "$dir/.git" ] || echo "/$f" >> "$dir/.git/info/exclude"
    done
    if [ -x "$ENVFIX/$APW_BASE/apply.sh" ]; then
        (cd "$dir" && "$ENVFIX/$APW_BASE/apply.sh") || die "envfix failed in $dir"
    fi
}

# git am the series onto the tree in $1; $2 stops after that many patches.
apply_series() {
    local dir=$1 upto=${2:-999} n=0 p
    for p in $(series_list); do
        [ $n -lt "$upto" ] || break
        [ -f "$PATCHES/$p" ] || die "series names $p, which is not in $PATCHES"
        if ! (cd "$dir" && git_team am -q --committer-date-is-author-date \
                "$PATCHES/$p") >"$dir/.git/am.log" 2>&1; then
            (cd "$dir" && git am --abort) >/dev/null 2>&1 || true
            die "patch $p does not apply to the $APW_BASE base: rebase it in $dir ($(head -n 1 "$dir/.git/am.log"))"
        fi
        n=$((n + 1))
    done
}

cover_description() {
    [ -f "$PATCHES/cover-letter.txt" ] || return 0
    git -C "$1" config branch.work.description "$(cat "$PATCHES/cover-letter.txt")"
}

# ./apw tree [--force]: create the tree, or refresh it if it has no work of
# its own on top of patches/.
cmd_tree() {
    local force=${1:-}
    if [ -d "$TREE/.git" ] && [ "$force" != --force ]; then
        if [ -n "$(git -C "$TREE" status --porcelain --untracked-files=no)" ]; then
            die "$TREE has uncommitted edits: commit them and './apw export', or './apw tree --force' to drop them"
        fi
        if [ "$(tree_patch_ids "$TREE")" != "$(series_patch_ids)" ]; then
            die "$TREE differs from patches/$APW_BASE: './apw export' to keep the tree's commits, or './apw tree --force' to rebuild it from patches/"
        fi
        say "tree $TREE is up to date with patches/$APW_BASE"
        return 0
    fi
    say "creating $TREE from the $APW_BASE base and patches/$APW_BASE"
    make_base_tree "$TREE"
    apply_series "$TREE"
    cover_description "$TREE"
}

tree_patch_ids() {
    local c
    git -C "$1" rev-list --reverse base..HEAD | while read -r c; do
        git -C "$1" show "$c" | git patch-id --stable | cut -d' ' -f1
    done
}

series_patch_ids() {
    local p
    for p in $(series_list); do
        git patch-id --stable < "$PATCHES/$p" | cut -d' ' -f1
    done
}

# Write the commits base..HEAD of tree $1 as a series into folder $2.
export_series() {
    local dir=$1 out=$2 date
    mkdir -p "$out"
    rm -f "$out"/[0-9][0-9][0-9][0-9]-*.patch
    # The cover letter's date: the newest commit's, so that it is stable.
    date=$(git -C "$dir" log -1 --format=%aD HEAD)
    (
        cd "$dir"
        GIT_COMMITTER_DATE=$date git_team -c core.abbrev=12 \
            -c diff.noprefix=false -c format.signOff=false \
            format-patch -q $FORMAT_PATCH_OPTS \
            --cover-from-description=subject \
            --subject-prefix="PATCH${APW_SERIES_VERSION:+ $APW_SERIES_VERSION}" -o "$out" base..HEAD
    )
    (cd "$out" && ls [0-9][0-9][0-9][0-9]-*.patch | grep -v '^0000-cover-letter') \
        > "$out/series"
}

# ./apw export: write the tree's commits back to patches/.
cmd_export() {
    [ -d "$TREE/.git" ] || die "no tree at $TREE: run './apw tree' first"
    if [ -n "$(git -C "$TREE" status --porcelain --untracked-files=no)" ]; then
        die "$TREE has uncommitted edits: commit them first"
    fi
    if [ "$(git -C "$TREE" rev-list --count base..HEAD)" = 0 ]; then
        die "$TREE has no commits above the base"
    fi
    local d
    d=$(git -C "$TREE" config branch.work.description || true)
    [ -z "$d" ] || printf '%s\n' "$d" > "$PATCHES/cover-letter.txt.new"
    export_series "$TREE" "$PATCHES"
    [ ! -f "$PATCHES/cover-letter.txt.new" ] ||
        mv "$PATCHES/cover-letter.txt.new" "$PATCHES/cover-letter.txt"
    say "exported $(wc -l < "$PATCHES/series") patches to $PATCHES"
}

# ./apw roundtrip: apply patches/ to a fresh base, export again, compare.
cmd_roundtrip() {
    local tmp=$BW/roundtrip
    rm -rf "$tmp"
    if git -C "$TREE" rev-parse -q --verify refs/tags/base >/dev/null 2>&1; then
        # The work tree's base commit is the pristine base (make_base_tree):
        # a clone of it saves unpacking and hashing the sources again.
        git clone -q --shared --no-checkout "$TREE" "$tmp/qemu"
        git -C "$tmp/qemu" checkout -q -B work base
    else
        make_base_tree "$tmp/qemu" >/dev/null
    fi
    apply_series "$tmp/qemu"
    cover_description "$tmp/qemu"
    export_series "$tmp/qemu" "$tmp/patches"
    cp "$PATCHES/cover-letter.txt" "$tmp/patches/" 2>/dev/null || true
    if ! diff -r "$PATCHES" "$tmp/patches" > "$tmp/diff" 2>&1; then
        die "patches/$APW_BASE does not round-trip: see $tmp/diff"
    fi
    rm -rf "$tmp"
    say "patches/$APW_BASE round-trips byte for byte"
}
