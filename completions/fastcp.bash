# SPDX-License-Identifier: MIT

# bash completion for fastcp(1)                          -*- shell-script -*-
# Installed as $(PREFIX)/share/bash-completion/completions/fastcp; works with
# or without the bash-completion package (it uses none of its helpers).

_fastcp()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev= pre= i
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}

    # "--opt=VALUE": with '=' in COMP_WORDBREAKS (the default) bash splits
    # it into the words "--opt", "=" and "VALUE"; without, it is one word.
    if [[ $cur == = && $prev == --* ]]; then
        cur=
    elif [[ $prev == = ]] && ((COMP_CWORD > 1)) &&
        [[ ${COMP_WORDS[COMP_CWORD - 2]} == --* ]]; then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    elif [[ $cur == --*=* ]]; then
        prev=${cur%%=*}
        pre=$prev=
        cur=${cur#*=}
    elif [[ $prev == --preserve || $prev == --reflink || $prev == --backup ||
        $prev == --update || $prev == --context || $prev == --verify ||
        $prev == --checksum || $prev == --progress ]]; then
        # Their value is optional and must follow '=': a word after them
        # is an operand.
        prev=
    fi

    local values=
    case $prev in
        --strategy) values='auto reflink copy_file_range direct sendfile splice rw' ;;
        --reflink) values='auto always never' ;;
        --sparse) values='auto always never' ;;
        --sync) values='none data full osync odsync' ;;
        --update) values='all none none-fail older' ;;
        --backup) values='none off numbered t existing nil simple never' ;;
        --verify) values='dest source' ;;
        --checksum) values='sha256 sha512' ;;
        --progress) values='bar json' ;;
        --checksum-file)
            compopt -o filenames 2>/dev/null
            local IFS=$'\n'
            COMPREPLY=($(compgen -f -- "$cur"))
            [[ -n $pre ]] && COMPREPLY=("${COMPREPLY[@]/#/$pre}")
            return 0
            ;;
        -S | --suffix | --context) values='' ; return 0 ;;
        --preserve | --no-preserve)
            # A comma-separated list: complete the word after the last comma.
            local done= w
            if [[ $cur == *,* ]]; then
                done=${cur%,*},
                cur=${cur##*,}
            fi
            local IFS=$' \t\n'
            COMPREPLY=()
            for w in mode timestamps ownership links context xattr all; do
                [[ ,$done == *,$w,* ]] && continue
                [[ $w == "$cur"* ]] && COMPREPLY+=("$pre$done$w")
            done
            ((${#COMPREPLY[@]} == 1)) && compopt -o nospace 2>/dev/null
            return 0
            ;;
        -t | --target-directory | --bench-from)
            compopt -o filenames 2>/dev/null
            local IFS=$'\n'
            COMPREPLY=($(compgen -d -- "$cur"))
            [[ -n $pre ]] && COMPREPLY=("${COMPREPLY[@]/#/$pre}")
            return 0
            ;;
        --buffer-size | --bench-size)
            # SIZE: bytes with an optional K, M, G or T suffix.
            values='64K 256K 1M 4M 16M 64M 256M 1G'
            ;;
        -j | --jobs | --bench-runs)
            values='1 2 3 4 5 8 16'
            ;;
    esac
    if [[ -n $values ]]; then
        local IFS=$' \t\n'
        COMPREPLY=($(compgen -W "$values" -- "$cur"))
        [[ -n $pre ]] && COMPREPLY=("${COMPREPLY[@]/#/$pre}")
        return 0
    fi

    # After "--" every word is an operand; with --benchmark the one operand
    # is a directory.
    local operands_only= benchmark=
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            --) operands_only=1 ;;
            --benchmark) benchmark=1 ;;
        esac
    done

    if [[ -z $operands_only && $cur == -* ]]; then
        local IFS=$' \t\n'
        # Options taking a value end in '=' so that the value can follow.
        local opts='
            -r -R --recursive -a --archive -d -p --preserve --preserve=
            --no-preserve= --attributes-only
            -t --target-directory= -T --no-target-directory
            --parents --strip-trailing-slashes
            -L --dereference -P --no-dereference -H
            -l --link -s --symbolic-link --copy-contents
            --keep-directory-symlink -x --one-file-system
            -Z --context --context=
            --strategy= --reflink --reflink= --sparse= --buffer-size=
            -j --jobs=
            -f --force -n --no-clobber -i --interactive
            -u --update --update= --remove-destination
            -b --backup --backup= -S --suffix= --inplace
            --sync= --nocache --verify --verify= --resume
            --checksum --checksum= --checksum-file=
            -v --verbose --debug -q --quiet --progress --progress= --no-progress
            -h --help --version
            --benchmark --bench-size= --bench-runs= --bench-from= --json
            --'
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        if [[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *= ]]; then
            compopt -o nospace 2>/dev/null
        fi
        return 0
    fi

    compopt -o filenames 2>/dev/null
    local IFS=$'\n'
    if [[ -n $benchmark ]]; then
        COMPREPLY=($(compgen -d -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
    return 0
} &&
    complete -F _fastcp fastcp

# ex: filetype=sh
