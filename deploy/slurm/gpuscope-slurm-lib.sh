# Shared by gpuscope-prolog and gpuscope-epilog (sourced, not run).
#
# The job-mapping directory is dcgm-exporter's convention, which
# `gpuscope serve --hpc-job-mapping-dir DIR` reads: one file per GPU holding
# the ids of the jobs on it, one per line. dcgm-exporter names the file by the
# GPU's NVML index; these scripts name it by what Slurm knows of the GPU: its
# device file's minor number (nvidia<minor>) or its UUID (gpuscope_job_gpus).
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

# gpuscope_job_gpus: the names of the job's GPUs in the mapping directory, one
# per line (the agent's forms: src/attribution/hpc_jobs.h):
#   GPU-<uuid>, MIG-<uuid>  where Slurm names GPUs by UUID (Slurm 25.11's
#                           CUDA_VISIBLE_DEVICES, gres.conf UniqueId=)
#   nvidia<minor>           for a gres index (SLURM_JOB_GPUS): the minor number
#                           of the node's index-th GPU device file
#                           (gpuscope_gres_gpu_files), which the agent matches
#                           with NVML's minor number whatever NVML's (PCI) order.
#                           Never the index itself: on some hosts /dev/nvidia0 is
#                           not NVML's GPU 0.
# Nothing for a job without GPUs; an entry that names no GPU is logged, skipped.
gpuscope_job_gpus() {
    local list=${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}} id path minor index file
    case ,${CUDA_VISIBLE_DEVICES:-}, in
        *,GPU-* | *,MIG-*) list=$CUDA_VISIBLE_DEVICES ;;  # UUIDs name GPUs best
    esac
    local -A files=()
    local listed=
    for id in ${list//,/ }; do
        case $id in
            GPU-?* | MIG-?*)
                case ${id#???-} in
                    *[!0-9A-Fa-f-]*) gpuscope_log "ignoring GPU '$id' (not a GPU or MIG UUID)" ;;
                    *) [ "${#id}" -le 64 ] && echo "$id" ;;
                esac
                continue ;;
            '' | *[!0-9]*) gpuscope_log "ignoring GPU '$id' (not an index or UUID)"; continue ;;
        esac
        if [ -z "$listed" ]; then
            listed=1
            while read -r index file; do
                files[$index]=$file
            done < <(gpuscope_gres_gpu_files)
        fi
        path=${files[$((10#$id))]:-}
        if [ "${#files[@]}" = 0 ]; then
            path=/dev/nvidia$((10#$id))  # Slurm did not say: the common layout
        elif [ -z "$path" ]; then
            gpuscope_log "GPU $id: not among the node's gres GPU device files: not mapped"
            continue
        fi
        if minor=$(gpuscope_device_minor "$path"); then
            echo "nvidia$minor"
        else
            gpuscope_log "GPU $id: $path is no NVIDIA device file: not mapped"
        fi
    done
}

# gpuscope_gres_gpu_files: the node's GPU device files by gres index, one
# "INDEX PATH" a line: GPUSCOPE_GRES_GPU_FILES (blank-separated, index k the
# k-th) where set, else Slurm's own list (`slurmd -G`, which prints it from
# gres.conf or AutoDetect). Nothing when neither says: index k is then
# /dev/nvidia<k>, the common `File=/dev/nvidia[0-N]` layout.
gpuscope_gres_gpu_files() {
    local -a given
    local index
    if [ -n "${GPUSCOPE_GRES_GPU_FILES:-}" ]; then
        read -r -a given <<< "$GPUSCOPE_GRES_GPU_FILES"
        for index in "${!given[@]}"; do
            echo "$index ${given[$index]}"
        done
        return
    fi
    # slurmd -G: "Gres Name=gpu ... Count=C Index=I ... File=SPEC ..." per record.
    "${SLURMD:-slurmd}" -G ${SLURMD_NODENAME:+-N "$SLURMD_NODENAME"} 2>&1 |
        awk '$0 ~ / Gres Name=gpu / {
                count = index_ = file = ""
                for (i = 1; i <= NF; i++) {
                    if ($i ~ /^Count=/) count = substr($i, 7)
                    else if ($i ~ /^Index=/) index_ = substr($i, 7)
                    else if ($i ~ /^File=/) file = substr($i, 6)
                }
                if (count == "" || index_ == "" || file == "" || file == "(null)") next
                n = expand(file, paths)
                # One file per GPU; a GPU of several files (a MIG device: its
                # parent /dev/nvidiaN first) is its first.
                if (n == count) for (j = 1; j <= n; j++) print index_ + j - 1, paths[j]
                else if (count == 1) print index_, paths[1]
             }
             # "/dev/nvidia[0-2,5],/dev/x" -> paths[1..n], in order.
             function expand(spec, paths,    n, item, c, ch, depth, j, k, pre, post, ranges,
                             r, lo, hi, width) {
                n = 0; item = ""; depth = 0
                for (c = 1; c <= length(spec) + 1; c++) {
                    ch = c <= length(spec) ? substr(spec, c, 1) : ","
                    if (ch == "[") depth++
                    if (ch == "]") depth--
                    if (ch != "," || depth > 0) { item = item ch; continue }
                    if (match(item, /\[[^]]*\]/)) {
                        pre = substr(item, 1, RSTART - 1)
                        post = substr(item, RSTART + RLENGTH)
                        k = split(substr(item, RSTART + 1, RLENGTH - 2), ranges, ",")
                        for (r = 1; r <= k; r++) {
                            lo = ranges[r]; hi = ranges[r]
                            if (index(ranges[r], "-")) {
                                lo = substr(ranges[r], 1, index(ranges[r], "-") - 1)
                                hi = substr(ranges[r], index(ranges[r], "-") + 1)
                            }
                            width = length(lo)
                            for (j = lo + 0; j <= hi + 0; j++)
                                paths[++n] = pre sprintf("%0" width "d", j) post
                        }
                    } else if (item != "") paths[++n] = item
                    item = ""
                }
                return n
             }'
}

# gpuscope_device_minor PATH: the minor number of an NVIDIA device file (a
# character device of major 195, as the driver makes /dev/nvidia<minor>);
# for a path that is no device file, the number its name ends with, as
# Slurm reads it (/dev/nvidia3: 3). Fails when it says neither.
gpuscope_device_minor() {
    local path=$1 kind major minor
    if [ -c "$path" ]; then
        read -r kind major minor < <(stat -L -c 'c %t %T' -- "$path") || return 1
        [ "$kind" = c ] && [ "$((16#$major))" = 195 ] || return 1
        echo "$((16#$minor))"
        return
    fi
    case ${path##*/} in
        nvidia*[0-9]) minor=${path##*/nvidia} ;;
        *) return 1 ;;
    esac
    case $minor in *[!0-9]*) return 1 ;; esac
    echo "$((10#$minor))"
}

# gpuscope_unmap_job JOB: removes JOB from every mapping file, whatever its
# name's form (written by this prolog, an older one that named GPUs by index,
# or another tool), so a numbering changed since the prolog leaves nothing.
gpuscope_unmap_job() {
    local job=$1 file name
    for file in "$GPUSCOPE_HPC_JOB_MAPPING_DIR"/*; do
        name=${file##*/}
        case $name in
            [0-9]* | nvidia[0-9]* | GPU-* | MIG-*) ;;
            *) continue ;;
        esac
        if [ ! -f "$file" ] || ! grep -qxF -- "$job" "$file"; then
            continue
        fi
        gpuscope_edit_mapping remove "$job" "$name" || gpuscope_log "could not unmap GPU $name"
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
# the mapping file named GPU (a gpuscope_job_gpus name), under a lock (two
# jobs may share a GPU) and through a rename, so the agent never reads half a
# file. An emptied file is removed.
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
