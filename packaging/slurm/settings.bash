# Sourced by the Slurm scripts beside this file (imex-channel, healthcheck): finds and reads their
# KEY=VALUE settings, checks a path that root is to write (safe_path) and a program that root is to run
# (safe_program, check_programs), below.
#   settings_file NAME DIR   /etc/cumemctl/NAME where it exists (an administrator's copy, which no
#                            package upgrade replaces; CUMEMCTL_ETC names another folder, for tests),
#                            else DIR/NAME (the package's, beside the script)
#   read_settings FILE KEY...
# As root, FILE is first judged as a program is (safe_program: root's, in folders only root can
# change; refused through the caller's fail with REFUSED). Sets each KEY that FILE gives (no quotes, no spaces around =; # starts a comment line; the rest of
# the line is the value, spaces and all). A line that is not KEY=VALUE, or a KEY not in the list, is
# refused through the caller's die (which must exit). A FILE that does not exist leaves every default.
# The caller defines die MESSAGE (exit 1) and fail STATUS MESSAGE (exit STATUS), each saying MESSAGE
# where the script says things.
#
# A refusal, root's "no" to a program, file or folder that a user other than root could change, exits
# with REFUSED: cumemctl's own exit code for it (4, permission denied), so that the scripts and the
# binary say the same thing. Slurm takes it as any non-zero status: a failed prolog or epilog drains
# the node (the prolog's batch job is requeued and held), a health check's status changes nothing.
REFUSED=4
settings_file() {
  local etc=${CUMEMCTL_ETC:-/etc/cumemctl}
  if [[ -f $etc/$1 ]]; then echo "$etc/$1"; else echo "$2/$1"; fi
}
read_settings() {
  local file=$1 lineno=0 line key value allowed checked
  shift
  # What the settings say decides what root makes and runs: as root, a file that only root can change.
  [[ $file == /* ]] || file=$PWD/$file
  checked=$(safe_program "settings file" "$file") ||
    fail "$REFUSED" "$checked; give settings that only root can change, in folders that only root can change"
  [[ -f $checked ]] || return 0
  file=$checked
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
#   safe_path PATH
# Whether root may open PATH to write it (a log, a lock) with no one else able to turn that write
# elsewhere: prints PATH's name to open and succeeds, or prints why not and fails: with REFUSED where
# someone else could change it, 1 where its folder is missing. The folder is walked as safe_program
# walks a program's path (every folder root's and writable by neither group nor others, one above it
# may be sticky as /tmp is; each link root's, resolved here, never one that another user placed); the
# file itself, where it exists, a regular file (no symlink) of one link, owned by root (or this user).
# So no one else can plant a symlink or a hard link there, before the check or after it. Not as root,
# nothing is refused (cumemctl checks only as root).
safe_path() {
  local path=$1 dir folder name p owner links why
  folder=$(dirname -- "$path")
  [[ $folder == /* ]] || folder=$PWD/$folder  # never a bare name, which safe_program looks up in PATH
  name=$(basename -- "$path")
  dir=$(safe_program folder "$folder" folder) || { echo "${dir#"refusing folder $folder: "}"; return "$REFUSED"; }
  [[ -d $dir ]] || { echo "its folder $folder does not exist"; return 1; }
  p=${dir%/}/$name
  if [[ -e $p || -L $p ]]; then
    [[ ! -L $p ]] || { echo "$p is a symlink"; return "$REFUSED"; }
    [[ -f $p ]] || { echo "$p is not a regular file"; return "$REFUSED"; }
    why=$(owners_unvouched "$p") && { echo "$p $why"; return "$REFUSED"; }
    read -r owner links < <(stat -c '%u %h' -- "$p")
    [[ $links == 1 ]] || { echo "$p has $links hard links"; return "$REFUSED"; }
    [[ $owner == 0 || $owner == $(id -u) ]] || { echo "$p is owned by uid $owner, not root"; return "$REFUSED"; }
  fi
  echo "$p"
}
#   safe_dir DIR
# Makes the folder DIR (mode 0700) where it is missing, so that root may keep files in it: checks DIR
# and every folder above it from / down, BEFORE anything is made or changed, and makes a missing folder
# only in one that passed (mkdir of one name at a time, which never follows a link). Each must be a
# folder, no symlink, owned by root (or this user), and writable by no one else; a folder above DIR may
# be a sticky one such as /tmp (others can add names there but not rename or remove root's; what root
# finds in it is checked in turn). Prints DIR and succeeds, or prints why not and fails (REFUSED where
# someone else could change a folder, or the path names ..; 1 where it is not absolute or a folder
# cannot be made or looked at); nothing is made after the first folder that fails.
safe_dir() {
  local dir=$1 me p=/ part owner mode parts why
  me=$(id -u)
  [[ $dir == /* ]] || { echo "$dir is not an absolute path"; return 1; }
  IFS=/ read -ra parts <<<"${dir#/}"
  for part in "" "${parts[@]}"; do
    [[ $part == . ]] && continue
    [[ $part == .. ]] && { echo "$dir names .., which could lead anywhere"; return "$REFUSED"; }
    [[ -n $part ]] && p=${p%/}/$part
    [[ -n $part || $p == / ]] || continue
    if [[ ! -e $p && ! -L $p ]]; then
      # Another prolog of this node may make it at the same moment: one that is there now is checked below.
      mkdir -m 0700 -- "$p" 2>/dev/null || [[ -e $p || -L $p ]] || { echo "cannot make $p"; return 1; }
    fi
    [[ ! -L $p ]] || { echo "$p is a symlink"; return "$REFUSED"; }
    [[ -d $p ]] || { echo "$p is not a folder"; return "$REFUSED"; }
    read -r owner mode < <(stat -c '%u %#a' -- "$p") || { echo "cannot stat $p"; return 1; }
    why=$(owners_unvouched "$p") && { echo "$p $why"; return "$REFUSED"; }
    [[ $owner == 0 || $owner == "$me" ]] || { echo "$p is owned by uid $owner, not root"; return "$REFUSED"; }
    if ((mode & 8#022)) && { [[ $p == "${dir%/}" || $p == "$dir" ]] || ! ((mode & 8#1000)); }; then
      echo "others may write $p (mode $(printf '%04o' "$mode"))"
      return "$REFUSED"
    fi
  done
  echo "$p"
}
#   owners_unvouched PATH
# On a FUSE file system, owners and modes are what its program says, and that program runs as whoever
# mounted it (cumemctl(1) SECURITY): prints why PATH's owners cannot be believed and succeeds where it
# lies on a FUSE file system that a user other than root mounted (its /proc/self/mountinfo line's
# user_id), one whose mounter cannot be found, or a file system that does not say what it is; fails
# everywhere else.
owners_unvouched() {
  local type dev major minor found
  type=$(stat -f -c %t -- "$1" 2>/dev/null) || { echo "is on a file system that does not say what it is"; return 0; }
  [[ $type == 65735546 ]] || return 1
  dev=$(stat -c %d -- "$1") || { echo "is on a file system that does not say what it is"; return 0; }
  major=$(( ((dev >> 8) & 0xfff) | ((dev >> 32) & ~0xfff) ))
  minor=$(( (dev & 0xff) | ((dev >> 12) & ~0xff) ))
  # id parent major:minor root mount-point options [optional...] - type source super-options
  found=$(awk -v d="$major:$minor" '$3 == d { for (i = 7; i < NF - 2; i++) if ($i == "-") {
            n = split($(i + 3), o, ","); for (j = 1; j <= n; j++) if (o[j] ~ /^user_id=[0-9]+$/) {
              print $(i + 1), substr(o[j], 9); exit } } exit }' /proc/self/mountinfo)
  [[ -n $found ]] || { echo "is on a FUSE file system whose mounter cannot be found: its owners are what its program says"; return 0; }
  [[ ${found#* } != 0 ]] || return 1
  echo "is on a ${found% *} file system that uid ${found#* } mounted: its owners and modes are what that user's program says"
  return 0
}
#   others_can_change PATH [sticky-ok]
# cumemctl's judgement of one file or folder, in its words: prints why someone other than root can
# change PATH ("belongs to uid 1000", "is writable by its group, gid 27 (mode 0775)", "is writable by
# every user (mode 0777)") and succeeds, or prints nothing and fails where only root can. With
# sticky-ok, a folder with the sticky bit passes (others can add names there, not replace root's).
others_can_change() {
  local owner group mode
  owners_unvouched "$1" && return 0
  read -r owner group mode < <(stat -c '%u %g %a' -- "$1") || { echo "cannot be looked at"; return 0; }
  mode=$((8#$mode))
  if ((owner != 0)); then echo "belongs to uid $owner"; return 0; fi
  [[ ${2:-} == sticky-ok && -d $1 && ! -L $1 ]] && ((mode & 8#1000)) && return 1
  ((mode & 8#002)) && { echo "is writable by every user (mode $(printf '%04o' "$mode"))"; return 0; }
  ((mode & 8#020)) && { echo "is writable by its group, gid $group (mode $(printf '%04o' "$mode"))"; return 0; }
  return 1
}
#   safe_program NAME PATH [folder]
# Whether root may run PATH, the program that the setting NAME names (CUMEMCTL, SQUEUE, SCONTROL): the
# rule of cumemctl itself (cumemctl(1) SECURITY), in its words. A bare name is looked up in PATH once
# (missing, it is refused where a PATH folder lets others add to it). The
# path is walked from / one name at a time, each link resolved here: every folder must be root's and
# writable by neither its group nor others, or root's and sticky (/tmp), and then each name used in it
# (file, folder or link) must be root's, and a file there must have no second name (a hard link that
# anyone could have made); a missing name is refused in a folder that others can add to;
# the file must be a regular file, root's, writable by neither group nor others. Prints the resolved
# path, which is what the script then runs (never the configured name again), and succeeds; or prints
# "refusing NAME PATH: WHAT WHY" and fails with REFUSED. Not as root, nothing is refused (cumemctl
# checks only as root). A link is followed only when it is root's (a folder that is root's now may have
# been another user's when they made it). With folder, PATH names a folder, judged as those above it
# (not sticky); a missing one is printed as it is, for the caller to report.
safe_program() {
  local name=$1 path=$2 want=${3:-file} here=/ next part why open links=0 target
  local -a todo more
  if [[ $path != */* ]]; then
    if ! next=$(type -P -- "$path") || [[ $next != /* ]]; then
      # Missing from every PATH folder: refused where another user could make it in one of them, each
      # folder walked as a program's path is (a link such as /sbin -> usr/sbin is followed, not judged by
      # its own mode bits, which are always 0777).
      [[ $(id -u) == 0 ]] || { echo "$path"; return 0; }
      local -a folders
      IFS=: read -ra folders <<<"$PATH"
      for here in "${folders[@]}"; do
        [[ $here == /* && -d $here ]] || continue
        why=$(safe_program "$name" "${here%/}/$path") && continue
        echo "refusing $name $2: $2 is not on PATH, and ${why#"refusing $name ${here%/}/$path: "}"
        return "$REFUSED"
      done
      echo "$path"
      return 0
    fi
    path=$next
  fi
  [[ $path == /* ]] || path=$PWD/$path
  [[ $(id -u) == 0 ]] || { readlink -m -- "$path"; return 0; }
  why=$(others_can_change / sticky-ok) && { echo "refusing $name $2: / $why"; return "$REFUSED"; }
  IFS=/ read -ra todo <<<"${path#/}"
  while ((${#todo[@]})); do
    part=${todo[0]}
    todo=("${todo[@]:1}")
    [[ -z $part || $part == . ]] && continue
    [[ $part == .. ]] && { here=$(dirname -- "$here"); continue; }
    next=${here%/}/$part
    open=$(others_can_change "$here") || open=""
    if [[ ! -e $next && ! -L $next ]]; then
      [[ -z $open ]] || { echo "refusing $name $2: $next does not exist, and $here $open: another user could make it"; return "$REFUSED"; }
      echo "$next"
      return 0
    fi
    if [[ -n $open && $(stat -c %u -- "$next") != 0 ]]; then
      if [[ -L $next ]]; then
        echo "refusing $name $2: $next is a link of uid $(stat -c %u -- "$next") in $here, a folder that others can add to"
      else
        echo "refusing $name $2: $next belongs to uid $(stat -c %u -- "$next") in $here, a folder that others can add to"
      fi
      return "$REFUSED"
    fi
    if [[ -n $open && ! -d $next && ! -L $next ]] && (($(stat -c %h -- "$next") > 1)); then
      echo "refusing $name $2: $next has $(stat -c %h -- "$next") hard links, in $here, a folder that others can add to: any user could have made this name for root's file"
      return "$REFUSED"
    fi
    if [[ -L $next && $(stat -c %u -- "$next") != 0 ]]; then
      echo "refusing $name $2: $next is a link of uid $(stat -c %u -- "$next"): root follows only root's links"
      return "$REFUSED"
    fi
    if [[ -L $next ]]; then
      ((++links <= 40)) || { echo "refusing $name $2: $next has too many symbolic links on the way"; return "$REFUSED"; }
      target=$(readlink -- "$next")
      [[ $target == /* ]] && here=/
      IFS=/ read -ra more <<<"${target#/}"
      todo=("${more[@]}" "${todo[@]}")
      continue
    fi
    if [[ -d $next ]] && ((${#todo[@]})); then
      why=$(others_can_change "$next" sticky-ok) && { echo "refusing $name $2: $next $why"; return "$REFUSED"; }
      here=$next
      continue
    fi
    ((${#todo[@]} == 0)) || { echo "refusing $name $2: $next is not a folder"; return "$REFUSED"; }
    if [[ $want == folder ]]; then
      [[ -d $next ]] || { echo "refusing $name $2: $next is not a folder"; return "$REFUSED"; }
      why=$(others_can_change "$next") && { echo "refusing $name $2: $next $why"; return "$REFUSED"; }
      echo "$next"
      return 0
    fi
    [[ ! -d $next ]] || { echo "refusing $name $2: $next is a folder, not a file"; return "$REFUSED"; }
    [[ -f $next ]] || { echo "refusing $name $2: $next is not a regular file"; return "$REFUSED"; }
    why=$(others_can_change "$next") && { echo "refusing $name $2: $next $why"; return "$REFUSED"; }
    echo "$next"
    return 0
  done
  if [[ $want == folder ]]; then
    why=$(others_can_change "$here") && { echo "refusing $name $2: $here $why"; return "$REFUSED"; }
    echo "$here"
    return 0
  fi
  echo "refusing $name $2: $here is a folder, not a file"
  return "$REFUSED"
}
#   check_programs CONF NAME...
# safe_program for each setting NAME: on the first refusal, ends the script with REFUSED (the caller's
# fail), naming CONF, the setting, the file and why; sets each NAME that is a path to the path it
# resolved to, which is what the script then runs (a bare name stays: the scripts' PATH holds only the
# system's folders).
check_programs() {
  local conf=$1 name checked
  shift
  for name in "$@"; do
    [[ -n ${!name} ]] || continue
    checked=$(safe_program "$name" "${!name}") ||
      fail "$REFUSED" "$conf: $checked; give one that only root can change, in folders that only root can change"
    # The checked path, never the name again (a bare name's PATH search could find another file later).
    printf -v "$name" '%s' "$checked"
  done
}
