# Sourced by the Slurm scripts beside this file (imex-channel, healthcheck): finds and reads their
# KEY=VALUE settings.
#   settings_file NAME DIR   /etc/cumemctl/NAME where it exists (an administrator's copy, which no
#                            package upgrade replaces; CUMEMCTL_ETC names another folder, for tests),
#                            else DIR/NAME (the package's, beside the script)
#   read_settings FILE KEY...
# Sets each KEY that FILE gives (no quotes, no spaces around =; # starts a comment line; the rest of
# the line is the value, spaces and all). A line that is not KEY=VALUE, or a KEY not in the list, is
# refused through the caller's die (which must exit). A FILE that does not exist leaves every default.
settings_file() {
  local etc=${CUMEMCTL_ETC:-/etc/cumemctl}
  if [[ -f $etc/$1 ]]; then echo "$etc/$1"; else echo "$2/$1"; fi
}
read_settings() {
  local file=$1 lineno=0 line key value allowed
  shift
  [[ -f $file ]] || return 0
  while IFS= read -r line || [[ -n $line ]]; do
    lineno=$((lineno + 1))
    [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
    [[ $line =~ ^[[:space:]]*([A-Z_]+)=(.*)$ ]] || die "$file:$lineno: not KEY=VALUE: $line"
    key=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
    for allowed in "$@"; do
      [[ $key == "$allowed" ]] && { printf -v "$key" '%s' "$value"; continue 2; }
    done
    die "$file:$lineno: unknown setting $key"
  done <"$file"
}
