// Owns how many CPUs the emotion engine may use: os.availableParallelism() counts the host's cores (Node 20
// does not look at cgroup quotas), so a container limited to one CPU on a 32-core host would start 32 threads
// and ffmpeg segments that only fight for their quota. The cgroup v2 `cpu.max` (or v1 `cfs_quota_us` /
// `cfs_period_us`) quota caps it.
import fs from 'node:fs';
import os from 'node:os';

/** CPUs allowed by a cgroup v2 `cpu.max` line ("max 100000" or "200000 100000"); null when unlimited or unreadable. */
export function cpusFromCpuMax(text: string): number | null {
  const [quota, period] = text.trim().split(/\s+/);
  if (quota === undefined || quota === 'max') return null;
  return cpusFromQuota(Number(quota), Number(period ?? 100000));
}

/** CPUs allowed by a cgroup v1 quota and period (µs); quota −1 means unlimited. */
export function cpusFromQuota(quotaUs: number, periodUs: number): number | null {
  if (!Number.isFinite(quotaUs) || !Number.isFinite(periodUs) || quotaUs <= 0 || periodUs <= 0) return null;
  // A quota of 1.5 CPUs allows two threads to run part of the time each: round up, at least one.
  return Math.max(1, Math.ceil(quotaUs / periodUs - 1e-9));
}

function readOrNull(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** The cgroup CPU quota of this process, if any (v2 first, then v1). */
export function cgroupCpuLimit(root = '/sys/fs/cgroup'): number | null {
  const v2 = readOrNull(`${root}/cpu.max`);
  if (v2 !== null) return cpusFromCpuMax(v2);
  for (const dir of [`${root}/cpu,cpuacct`, `${root}/cpu`]) {
    const quota = readOrNull(`${dir}/cpu.cfs_quota_us`);
    const period = readOrNull(`${dir}/cpu.cfs_period_us`);
    if (quota !== null && period !== null) return cpusFromQuota(Number(quota.trim()), Number(period.trim()));
  }
  return null;
}

/** min(cgroup quota, cores), at least 1: the default thread and ffmpeg-segment count. */
export function availableCpus(root?: string): number {
  const cores = Math.max(1, os.availableParallelism());
  const limit = cgroupCpuLimit(root);
  return limit === null ? cores : Math.min(cores, limit);
}
