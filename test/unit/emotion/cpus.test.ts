// The CPU count the emotion engine sizes its threads and ffmpeg segments by: cgroup v2 `cpu.max` and v1 CFS
// quota parsing, and min(quota, cores) read from a cgroup directory laid out like /sys/fs/cgroup.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { availableCpus, cgroupCpuLimit, cpusFromCpuMax, cpusFromQuota } from '../../../workers/emotion/engine/cpus';

describe('emotion engine: CPUs allowed by the cgroup quota', () => {
  const dirs: string[] = [];
  const cgroup = (files: Record<string, string>): string => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cgroup-'));
    dirs.push(root);
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      fs.writeFileSync(path.join(root, name), text);
    }
    return root;
  };
  after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  it('parses cgroup v2 cpu.max', () => {
    expect(cpusFromCpuMax('max 100000\n')).to.equal(null);
    expect(cpusFromCpuMax('100000 100000\n')).to.equal(1);
    expect(cpusFromCpuMax('150000 100000')).to.equal(2); // 1.5 CPUs: two threads may each run part of the time
    expect(cpusFromCpuMax('50000 100000')).to.equal(1);
    expect(cpusFromCpuMax('400000 100000')).to.equal(4);
    expect(cpusFromCpuMax('')).to.equal(null);
    expect(cpusFromCpuMax('garbage')).to.equal(null);
  });

  it('parses cgroup v1 quota and period (−1 = unlimited)', () => {
    expect(cpusFromQuota(-1, 100000)).to.equal(null);
    expect(cpusFromQuota(200000, 100000)).to.equal(2);
    expect(cpusFromQuota(100000, 0)).to.equal(null);
  });

  it('reads v2 first, then v1, and caps the core count with it', () => {
    const cores = os.availableParallelism();
    expect(cgroupCpuLimit(cgroup({ 'cpu.max': '100000 100000\n' }))).to.equal(1);
    expect(availableCpus(cgroup({ 'cpu.max': '100000 100000\n' }))).to.equal(1);
    expect(availableCpus(cgroup({ 'cpu.max': 'max 100000\n' }))).to.equal(cores);
    expect(availableCpus(cgroup({ 'cpu.max': `${(cores + 8) * 100000} 100000\n` }))).to.equal(cores);
    const v1 = cgroup({ 'cpu,cpuacct/cpu.cfs_quota_us': '100000\n', 'cpu,cpuacct/cpu.cfs_period_us': '100000\n' });
    expect(availableCpus(v1)).to.equal(1);
    expect(cgroupCpuLimit(cgroup({}))).to.equal(null);
  });
});
