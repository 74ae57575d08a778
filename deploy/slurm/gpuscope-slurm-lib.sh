# Shared by gpuscope-prolog and gpuscope-epilog (sourced, not run).
#
# The job-mapping directory is dcgm-exporter's convention, which
# `gpuscope serve --hpc-job-mapping-dir DIR` reads: one file per GPU, named by
# its NVML index, holding the ids of the jobs on it, one per line.

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

# gpuscope_edit_mapping add|remove JOB GPU: adds JOB to (or removes it from)
# GPU's mapping file, under a lock (two jobs may share a GPU) and through a
# rename, so the agent never reads half a file. An emptied file is removed.
gpuscope_edit_mapping() {
    local action=$1 job=$2 gpu=$3
    local dir=$GPUSCOPE_HPC_JOB_MAPPING_DIR
    local file=$dir/$gpu tmp
    mkdir -p "$dir" || return 1
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
