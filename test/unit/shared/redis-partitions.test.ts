// The key layout past one Redis primary (shared/redis-partitions.ts, docs/operations.md "Redis past one primary"):
// stable partitions per account, each its own hash tag inside the deployment's, and the keys a script takes
// together (settle: credits, result, outbox, idempotency entry, undrained calls) under one tag.
import { expect } from 'chai';
import { allPartitionPrefixes, partitionOf, partitionPrefix, partitionPrefixAt, PARTITIONS, prefixOfKey } from '../../../shared/redis-partitions';
import { queueKeys, resultKeyBeside } from '../../../shared/queues/keys';
import { creditsKey } from '../../../shared/billing/credit-ledger';
import { outboxKey, undrainedKey } from '../../../shared/billing/usage-outbox';
import { clusterTarget } from '../../../shared/redis';

/** The hash tag Redis Cluster hashes a key by: between its first `{` and the next `}`. */
const tagOf = (key: string) => key.slice(key.indexOf('{') + 1, key.indexOf('}'));

describe('Redis key layout past one primary', () => {
  it('puts an account in the same one of 16 partitions in every process and version (FNV-1a of its id)', () => {
    expect(PARTITIONS).to.equal(16);
    expect(partitionOf('acct-1')).to.equal(partitionOf('acct-1'));
    expect([partitionOf('acct-1'), partitionOf('665f1c2e9b1e8a0012345678'), partitionOf('')]).to.deep.equal([12, 1, 5]);
  });

  it("derives each partition's tag from the deployment's: {lc} -> {lc:p00}..{lc:p15}", () => {
    expect(partitionPrefixAt('{lc}', 7)).to.equal('{lc:p07}');
    expect(partitionPrefixAt('{t-x-1}', 15)).to.equal('{t-x-1:p15}');
    expect(allPartitionPrefixes('{lc}')).to.have.length(PARTITIONS);
    expect(new Set(allPartitionPrefixes('{lc}')).size).to.equal(PARTITIONS);
    expect(prefixOfKey('{lc:p07}:result:job-1')).to.equal('{lc:p07}');
  });

  it("keeps the settle script's five keys under the account's tag, its job's result included", () => {
    const account = '665f1c2e9b1e8a0012345678';
    const home = partitionPrefix('{lc}', account);
    // The liveness tenant is the account: the job's payload and result go to its partition.
    const payload = queueKeys('{lc}').payload('job-1', account);
    const keys = [
      creditsKey('{lc}', account, '2026-12'),
      resultKeyBeside(payload, 'job-1'),
      outboxKey(home),
      `${home}:idem:${account}:d`,
      undrainedKey(home, account, '2026-12'),
    ];
    expect(new Set(keys.map(tagOf))).to.deep.equal(new Set([tagOf(home)]));
    expect(resultKeyBeside(payload, 'job-1')).to.equal(queueKeys('{lc}').result('job-1', account));
  });

  it('reads a redis-cluster:// URL as its seed nodes and credentials, and refuses a node without a port', () => {
    expect(clusterTarget('redis://127.0.0.1:6379')).to.equal(null);
    expect(clusterTarget('redis-cluster://127.0.0.1:7001,[::1]:7002/')).to.deep.equal({
      nodes: [
        { host: '127.0.0.1', port: 7001 },
        { host: '::1', port: 7002 },
      ],
    });
    expect(clusterTarget('redis-cluster://app:s%40cret@redis-0:6379')).to.deep.equal({
      nodes: [{ host: 'redis-0', port: 6379 }],
      username: 'app',
      password: 's@cret',
    });
    expect(() => clusterTarget('redis-cluster://redis-0')).to.throw('not host:port');
  });
});
