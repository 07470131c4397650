# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# bash completion for devcg; source it, or install it as
# /usr/share/bash-completion/completions/devcg
_devcg()
{
	local cur prev verb i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) verb=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [[ -z $verb ]]; then
		COMPREPLY=($(compgen -W "replace show check allow deny reset compile trace oci-hook attach detach doctor help -j --json -h --help -V --version" -- "$cur"))
		return
	fi
	if [[ $verb == help ]]; then
		[[ $prev == help ]] && COMPREPLY=($(compgen -W "replace show check allow deny reset compile trace oci-hook attach detach doctor" -- "$cur"))
		return
	fi
	case $prev in
	-f|--file|-r|--rules|--annotation-allow-file|--metrics) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--runtime-root) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--only) COMPREPLY=($(compgen -W "gap revoke writes denials" -- "$cur")); return ;;
	--hooks) COMPREPLY=($(compgen -W "auto tracepoint kprobe fentry" -- "$cur")); return ;;
	--runtime) COMPREPLY=($(compgen -W "runc crun $([[ $verb == oci-hook ]] && echo auto)" -- "$cur")); return ;;
	--method) COMPREPLY=($(compgen -W "auto mknod bind" -- "$cur")); return ;;
	--cdi-spec-dir|--state-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	esac
	local opts="-j --json -h --help"
	case $verb in
	replace) opts="$opts -f --file --runtime --audit --force --no-systemd --v1" ;;
	allow|deny) opts="$opts --audit --force --no-systemd" ;;
	check) opts="$opts -r --rules -p --pid" ;;
	show) opts="$opts -p --pid" ;;
	compile) opts="$opts -f --file --runtime" ;;
	oci-hook) opts="$opts -f --file --runtime --no-systemd --annotation-allow --annotation-allow-file --annotation-may-widen" ;;
	trace) opts="$opts --cgroup --pid --comm --duration --only --hooks --stats --metrics --metrics-interval --journal" ;;
	attach) opts="$opts -p --pid --container --state-dir --access --mode --uid --gid --cdi --cdi-spec-dir --method --force --no-systemd" ;;
	detach) opts="$opts -p --pid --container --state-dir --cdi --cdi-spec-dir --force --no-systemd" ;;
	doctor) opts="$opts -p --pid --container --runtime-root" ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	elif [[ $verb == attach || $verb == detach ]]; then
		# CGROUP, then host device nodes
		COMPREPLY=($(compgen -f -- "$cur"))
	else
		COMPREPLY=($(compgen -d -- "$cur"))
	fi
}
complete -F _devcg devcg
