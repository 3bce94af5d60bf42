# Completes a command line in a real interactive zsh (on a pseudo-terminal,
# zsh/zpty) with the completion function in directory $1, and prints what
# the terminal shows, escape sequences removed.
# Usage: zsh -f zsh_complete.zsh FPATH_DIR 'toolcache mcp --log-level '
setopt extendedglob
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1='' RPROMPT=''; fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D; toolcache() { :; }; zstyle ':completion:*' list-prompt ''; LISTMAX=10000"
zpty -n -w z "$2"$'\t'
local out= chunk
integer i
for (( i = 0; i < 30; i++ )); do
  sleep 0.1
  while zpty -rt z chunk 2>/dev/null; do out+=$chunk; done
done
zpty -d z
print -r -- "${${out//$'\r'/}//$'\e'\[[0-9;?]#[a-zA-Z]/}"
