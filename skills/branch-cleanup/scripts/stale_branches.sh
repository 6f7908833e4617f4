#!/usr/bin/env bash
# List local git branches that are merged into a base branch or have gone stale, and print
# the commands to delete them. Deletes nothing unless --delete is given, and even then only
# merged branches, with the safe `git branch -d`.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: stale_branches.sh [options]

Report local branches that are merged into the base branch (safe to delete) and
unmerged branches with no commits for N days (review before deleting).

Options:
  -b, --base BRANCH   branch to compare against (default: main, else master)
  -d, --days N        days without commits before an unmerged branch is stale (default: 90)
  -k, --keep GLOB     never report branches matching GLOB, e.g. 'release/*' (repeatable)
      --now EPOCH     reference time in seconds since 1970 (default: current time)
      --delete        delete the merged branches with `git branch -d` (never unmerged ones)
  -h, --help          show this help and exit

Exit status: 0 on success, 2 on usage errors or when not inside a git repository.
USAGE
}

die() { echo "error: $*" >&2; exit 2; }

base="" days=90 now="" delete=0
keep=(main master develop)
while [[ $# -gt 0 ]]; do
  case "$1" in
    -b|--base) [[ $# -ge 2 ]] || die "$1 needs a branch name"; base="$2"; shift 2 ;;
    -d|--days) [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || die "$1 needs a whole number of days"; days="$2"; shift 2 ;;
    -k|--keep) [[ $# -ge 2 ]] || die "$1 needs a glob pattern"; keep+=("$2"); shift 2 ;;
    --now) [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || die "--now needs seconds since 1970"; now="$2"; shift 2 ;;
    --delete) delete=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

git rev-parse --git-dir >/dev/null 2>&1 || die "not a git repository (run inside a clone)"

if [[ -z "$base" ]]; then
  for candidate in main master; do
    if git show-ref --verify --quiet "refs/heads/$candidate"; then base="$candidate"; break; fi
  done
  [[ -n "$base" ]] || die "no 'main' or 'master' branch; pass --base BRANCH"
fi
git rev-parse --verify --quiet "$base^{commit}" >/dev/null || die "base branch '$base' does not exist"

current="$(git symbolic-ref --quiet --short HEAD || true)"
now="${now:-$(date +%s)}"
cutoff=$(( now - days * 86400 ))
keep+=("$base")

merged_list="$(git for-each-ref --merged "$base" --format='%(refname:short)' refs/heads/)"

is_kept() {
  local name="$1" pattern
  [[ -n "$current" && "$name" == "$current" ]] && return 0
  for pattern in "${keep[@]}"; do
    # Unquoted right-hand side: glob match on purpose.
    # shellcheck disable=SC2053
    [[ "$name" == $pattern ]] && return 0
  done
  return 1
}

merged=() stale=() skipped=()
while IFS=$'\t' read -r name date stamp author; do
  [[ -n "$name" ]] || continue
  if is_kept "$name"; then skipped+=("$name"); continue; fi
  if grep -qxF -- "$name" <<<"$merged_list"; then
    merged+=("$name"$'\t'"$date"$'\t'"$author")
  elif (( stamp < cutoff )); then
    stale+=("$name"$'\t'"$date"$'\t'"$author")
  fi
done < <(git for-each-ref --sort=refname \
           --format='%(refname:short)%09%(committerdate:short)%09%(committerdate:unix)%09%(authorname)' refs/heads/)

print_rows() {
  local row name date author
  for row in "$@"; do
    IFS=$'\t' read -r name date author <<<"$row"
    printf '  %-30s %s  %s\n' "$name" "$date" "$author"
  done
}

echo "base: $base"
echo
echo "merged into $base (safe to delete): ${#merged[@]}"
print_rows "${merged[@]+"${merged[@]}"}"
echo
echo "stale, not merged (no commits for ${days}+ days; review first): ${#stale[@]}"
print_rows "${stale[@]+"${stale[@]}"}"
echo
if [[ ${#skipped[@]} -gt 0 ]]; then
  echo "protected: $(IFS=' '; echo "${skipped[*]}")"
  echo
fi

if [[ ${#merged[@]} -eq 0 ]]; then
  echo "nothing to delete"
  exit 0
fi
names=()
for row in "${merged[@]}"; do names+=("${row%%$'\t'*}"); done
if [[ $delete -eq 1 ]]; then
  for name in "${names[@]}"; do
    git branch -d -- "$name"
  done
else
  echo "to delete the merged branches run:"
  echo "  git branch -d ${names[*]}"
fi
