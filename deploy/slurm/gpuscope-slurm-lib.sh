# Shared by gpuscope-prolog and gpuscope-epilog (sourced, not run).
#
# The job-mapping directory is dcgm-exporter's convention, which
# `gpuscope serve --hpc-job-mapping-dir DIR` reads: one file per GPU, named by
# its NVML index, holding the ids of the jobs on it, one per line.
#
# slurmd runs both as root. Root never writes through a path a job owner
# controls: the job's own files are written as the job's owner
# (gpuscope_as_job_user), and the mapping directory must be root's alone
# (gpuscope_check_mapping_dir).

# slurmd runs prologs and epilogs with SLURM_* variables only: no PATH.
export PATH=${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}
GPUSCOPE_HPC_JOB_MAPPING_DIR=${GPUSCOPE_HPC_JOB_MAPPING_DIR:-/run/gpuscope/jobs}

gpuscope_log() {
    # slurmd keeps the prolog's and epilog's stderr in its log.
    echo "gpuscope-slurm: job ${SLURM_JOB_ID:-?}: $*" >&2
}

# The job's GPU indexes, one per line: SLURM_JOB_GPUS ("0,1"), else
# CUDA_VISIBLE_DEVICES; nothing for a job without GPUs.
gpuscope_job_gpus() {
    local gpus=${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}
    local gpu
    for gpu in ${gpus//,/ }; do
        case $gpu in
            '' | *[!0-9]*) gpuscope_log "ignoring GPU '$gpu' (not an index)" ;;
            *) echo "$gpu" ;;
        esac
    done
}

# gpuscope_check_mapping_dir: creates the mapping directory (0755) when it is
# missing, then succeeds only if nobody but us (root, under slurmd) can change
# it: it is no symbolic link, it is ours and not writable by group or others,
# and so is every folder above it (root's or ours; a sticky one like /tmp may
# be writable by all). The agent trusts these files: a job owner who could
# write them could put their jobs' labels on other users' GPUs.
gpuscope_check_mapping_dir() {
    local dir=$GPUSCOPE_HPC_JOB_MAPPING_DIR me path owner mode
    me=$(id -u)
    case $dir in
        /*) ;;
        *) gpuscope_log "mapping directory '$dir' is not an absolute path: refused"; return 1 ;;
    esac
    if [ ! -e "$dir" ] && [ ! -L "$dir" ]; then
        (umask 022 && mkdir -p -- "$dir") || return 1
    fi
    if [ -L "$dir" ] || [ ! -d "$dir" ]; then
        gpuscope_log "mapping directory $dir is a symbolic link or not a directory: refused"
        return 1
    fi
    path=$dir
    while :; do
        read -r owner mode < <(stat -L -c '%u %a' -- "$path") || return 1
        mode=$((8#$mode))
        if { [ "$owner" != 0 ] && [ "$owner" != "$me" ]; } ||
            { [ "$path" = "$dir" ] && [ "$owner" != "$me" ]; }; then
            gpuscope_log "mapping directory $dir: $path belongs to uid $owner: refused"
            return 1
        fi
        if ((mode & 8#022)) && { [ "$path" = "$dir" ] || ! ((mode & 8#1000)); }; then
            gpuscope_log "mapping directory $dir: $path is writable by others: refused"
            return 1
        fi
        [ "$path" = / ] && return 0
        path=$(dirname -- "$(readlink -f -- "$path")")
    done
}

# gpuscope_edit_mapping add|remove JOB GPU: adds JOB to (or removes it from)
# GPU's mapping file, under a lock (two jobs may share a GPU) and through a
# rename, so the agent never reads half a file. An emptied file is removed.
# The caller has checked the directory (gpuscope_check_mapping_dir).
gpuscope_edit_mapping() {
    local action=$1 job=$2 gpu=$3
    local dir=$GPUSCOPE_HPC_JOB_MAPPING_DIR
    local file=$dir/$gpu tmp
    (
        flock -w 10 9 || { gpuscope_log "lock $dir/.lock busy"; exit 1; }
        tmp=$(mktemp "$dir/.$gpu.XXXXXX") || exit 1
        if [ -f "$file" ]; then
            grep -vxF -- "$job" "$file" > "$tmp" || true
        fi
        if [ "$action" = add ]; then
            echo "$job" >> "$tmp"
        fi
        if [ -s "$tmp" ]; then
            chmod 0644 "$tmp" && mv -f "$tmp" "$file"
        else
            rm -f "$tmp" "$file"
        fi
    ) 9> "$dir/.lock"
}

# gpuscope_as_job_user COMMAND...: runs COMMAND as the job's owner
# (SLURM_JOB_UID and SLURM_JOB_GID, with the owner's own supplementary groups:
# an output file in a project folder writable by their group is theirs to
# write), so the kernel checks the owner's own rights on every path the job
# owner controls: their output file, or a symbolic link they put in its
# place, gets no more than they could write themselves. Fails (logged) where
# the owner is unknown.
gpuscope_as_job_user() {
    local uid=${SLURM_JOB_UID:-} gid=${SLURM_JOB_GID:-}
    case $uid in '' | *[!0-9]*) gpuscope_log "SLURM_JOB_UID '$uid' is not a uid"; return 1 ;; esac
    case $gid in '' | *[!0-9]*) gpuscope_log "SLURM_JOB_GID '$gid' is not a gid"; return 1 ;; esac
    if [ "$(id -u)" = "$uid" ] && [ "$(id -g)" = "$gid" ]; then
        "$@"  # already the owner (a job of root's, or a test run as the owner)
    else
        setpriv --reuid="$uid" --regid="$gid" --init-groups --no-new-privs -- "$@"
    fi
}
