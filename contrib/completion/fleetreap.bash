# bash completion for fleetreap(1) and `fleetreap merge` (fleetreap-merge(1)).
# Installed as /usr/share/bash-completion/completions/fleetreap; by hand:
#   source contrib/completion/fleetreap.bash
#
# The flags are read from the binary's own --help at each completion, so a
# flag added to src/cli/ completes without editing this file. A flag's value
# completes by the value name --help prints after it (FILE, DIR, WHEN,
# POLICY, USER, NAME|PATH); a flag whose value needs more goes in the case
# in _fleetreap_value below.

# Prints one "FLAG VALUE_NAME" line per flag of "$1 [merge] --help" (the
# value name empty for a switch); --help's option lines start with two spaces
# and a dash, the option part ends at the first run of two spaces.
_fleetreap_flags() {
  local bin=$1 sub=$2
  # shellcheck disable=SC2086  # $sub is empty or the word merge
  "$bin" $sub --help 2>/dev/null | awk '
    /^  -/ {
      spec = substr($0, 3)
      cut = index(spec, "  ")
      if (cut > 0) spec = substr(spec, 1, cut - 1)
      n = split(spec, w, " ")
      if (w[n] ~ /^\(=/) n--  # a default, "(=64)"
      value = ""
      if (w[n] ~ /^[A-Z][A-Z|_]*$/) { value = w[n]; n-- }
      for (i = 1; i <= n; i++) {
        if (w[i] ~ /^-/) print w[i], value
      }
    }'
}

# The host names of the inventory that the command line's --hosts names
# (fleetreap --list-hosts contacts no host); nothing without --hosts.
_fleetreap_hosts() {
  local bin=$1 inventory="" i
  for ((i = 1; i < COMP_CWORD - 1; i++)); do
    [[ ${COMP_WORDS[i]} == --hosts || ${COMP_WORDS[i]} == -i ]] && inventory=${COMP_WORDS[i + 1]}
  done
  [[ -n $inventory ]] || return 0
  "$bin" --hosts "${inventory/#\~/$HOME}" --list-hosts 2>/dev/null | awk '{ print $1 }'
}

# Completes the value of flag "$2" (value name "$3") of "$1" for the word "$4".
_fleetreap_value() {
  local bin=$1 flag=$2 value=$3 cur=$4
  case $flag in
    --limit | -l)
      if [[ $cur == @* ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -P @ -- "${cur#@}")
      else
        mapfile -t COMPREPLY < <(compgen -W "$(_fleetreap_hosts "$bin")" -- "$cur")
      fi
      return
      ;;
    --hosts | -i)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur"; compgen -W 'slurm:' -- "$cur")
      return
      ;;
  esac
  case $value in
    FILE | NAME\|PATH)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      ;;
    DIR)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -d -- "$cur")
      ;;
    WHEN) mapfile -t COMPREPLY < <(compgen -W 'auto always never' -- "$cur") ;;
    POLICY) mapfile -t COMPREPLY < <(compgen -W 'strict accept-new off' -- "$cur") ;;
    USER) mapfile -t COMPREPLY < <(compgen -u -- "$cur") ;;
    *) COMPREPLY=() ;;
  esac
}

_fleetreap() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local prev=""
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  local bin=${COMP_WORDS[0]/#\~/$HOME}
  local sub=""
  ((COMP_CWORD > 1)) && [[ ${COMP_WORDS[1]} == merge ]] && sub=merge
  COMPREPLY=()

  local flag value
  local -a flags=()
  while read -r flag value; do
    flags+=("$flag")
    if [[ $prev == "$flag" && -n $value ]]; then
      _fleetreap_value "$bin" "$flag" "$value" "$cur"
      return 0
    fi
  done < <(_fleetreap_flags "$bin" "$sub")

  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "${flags[*]}" -- "$cur")
  elif [[ $sub == merge ]]; then
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -X '!*.json' -- "$cur"; compgen -d -- "$cur")
  elif ((COMP_CWORD == 1)); then
    mapfile -t COMPREPLY < <(compgen -W "merge sweep ${flags[*]}" -- "$cur")
  fi
  return 0
}

complete -F _fleetreap fleetreap
