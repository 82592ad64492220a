// Owns the client address as the per-address limiters key it: an IPv4 address is one subject; an IPv6 address
// counts by its /64, the block one subscriber or host is given and can rotate through at will (so a per-address
// limit on the full IPv6 address would be no limit); an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, what a
// dual-stack socket reports for an IPv4 client) counts as its IPv4 address.
import net from 'node:net';
import type { Request } from 'express';

/** The eight 16-bit groups of an IPv6 address (zone id dropped, embedded IPv4 tail included); null if it is none. */
function ipv6Groups(address: string): number[] | null {
  const text = address.split('%')[0]!;
  if (!net.isIPv6(text)) return null;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  const hex = v4
    ? `${text.slice(0, v4.index)}${((Number(v4[1]) << 8) | Number(v4[2])).toString(16)}:${((Number(v4[3]) << 8) | Number(v4[4])).toString(16)}`
    : text;
  const [head, tail] = hex.split('::') as [string, string | undefined];
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  const middle = tail === undefined ? [] : Array<string>(8 - front.length - back.length).fill('0');
  return [...front, ...middle, ...back].map((g) => parseInt(g, 16));
}

/** The subject a per-address limiter counts `address` under: IPv4 as is, IPv6 as its /64, IPv4-mapped as IPv4. */
export function addressBlock(address: string): string {
  const groups = ipv6Groups(address);
  if (!groups) return address;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/**
 * The client's whole address as Express resolved it (X-Forwarded-For only from what TRUST_PROXY names): what the
 * audit log keeps; limiters key by limiterAddress.
 */
export function clientAddress(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/** What a per-address limiter keys this request by. */
export function limiterAddress(req: Request): string {
  return addressBlock(clientAddress(req));
}
