# Sourced by fetch-brown.sh and fetch-eval.sh: what both do to write files into a
# directory safely. Needs $prog (the script's name for messages) and $dir.

have() { [ -f "$1" ] && [ -s "$1" ]; }

# NAME...: refuses to go on when something other than a regular file stands where one
# of the NAMEs goes in $dir.
refuse_non_files() {
  local n
  for n in "$@"; do
    if [ -e "$dir/$n" ] && [ ! -f "$dir/$n" ]; then
      echo "$prog: $dir/$n is not a regular file; move it away and run again" >&2
      exit 1
    fi
  done
}

# Files being written (removed on exit unless renamed into place) and the scratch directory.
pending=() tmp=""
cleanup() { rm -rf -- ${pending[@]+"${pending[@]}"} ${tmp:+"$tmp"}; }
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
mode="$(printf '%o' $((0666 & ~$(umask))))"
stage() {  # NAME: sets $staged to a new file in $dir to write NAME into
  staged="$(mktemp "$dir/.$1.XXXXXX")"
  chmod "$mode" "$staged"
  pending+=("$staged")
}
