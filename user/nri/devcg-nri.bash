# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# bash completion for devcg-nri
_devcg_nri()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}

	case $prev in
	--socket) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--state-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--name | --idx) COMPREPLY=(); return ;;
	esac
	COMPREPLY=($(compgen -W '--socket --name --idx --state-dir --strict --no-systemd -v --verbose -h --help -V --version' -- "$cur"))
}
complete -F _devcg_nri devcg-nri
