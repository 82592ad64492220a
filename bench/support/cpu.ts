// Owns reading a process's CPU time from /proc (Linux): the process's threads plus its reaped children (ffmpeg,
// ffprobe), which process.cpuUsage() leaves out. On a machine shared with other jobs this is the figure that
// does not grow with the neighbours' load, unlike wall time.
import fs from 'node:fs';

/** utime + stime + cutime + cstime of a process (fields 14–17 of /proc/PID/stat, 100 Hz ticks), milliseconds. */
export function processTreeCpuMs(pid: number | 'self' = 'self'): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields.slice(11, 15).reduce((s, v) => s + Number(v), 0) * 10;
}
