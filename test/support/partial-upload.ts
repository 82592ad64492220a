// A client that declares a 10 MB body, sends only its first 256 KB and waits: an answer can only come if the server
// decided without the rest (refuse before reading), and the connection closing shows it will not read it.
import net from 'node:net';

/** A maximal upload's declared length (10 MB and a little framing). */
export const DECLARED_BYTES = 10 * 1024 * 1024 + 40;
/** What the client sends before it waits for an answer: `head`, then filler up to 256 KB. */
const SENT_FIRST = 256 * 1024;

export interface PartialAnswer {
  status: number;
  connectionClose: boolean;
  sentBytes: number;
  /** The response body as text (after the headers). */
  body: string;
}

export interface PartialUpload {
  /** Resolves once the server answered and closed the connection. */
  answered: Promise<PartialAnswer>;
  socket: net.Socket;
}

/**
 * Declares a 10 MB body (or `declaredBytes`), sends its first 256 KB (or `sentBytes`) and waits: the server must
 * answer (and close) without the rest.
 */
export function partialUpload(
  port: number,
  path: string,
  headers: Record<string, string>,
  head: Buffer,
  o: { declaredBytes?: number; sentBytes?: number } = {},
): PartialUpload {
  const socket = net.connect(port, '127.0.0.1');
  let response = '';
  let sentBytes = 0;
  const answered = new Promise<PartialAnswer>((resolve, reject) => {
    socket.on('connect', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${Object.entries(headers)
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('')}Content-Length: ${o.declaredBytes ?? DECLARED_BYTES}\r\n\r\n`,
      );
      const start = Buffer.alloc(Math.max(0, (o.sentBytes ?? SENT_FIRST) - head.length), 'A');
      socket.write(head);
      socket.write(start);
      sentBytes = head.length + start.length;
    });
    socket.on('data', (d: Buffer) => (response += d.toString('latin1')));
    // The server closing is the point; a reset after its answer (our unread bytes) is fine.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);
      if (!status) reject(new Error(`the connection closed without an answer: ${JSON.stringify(response.slice(0, 200))}`));
      else {
        const body = response.slice(response.indexOf('\r\n\r\n') + 4);
        resolve({ status, connectionClose: /\r\nconnection: close\r\n/i.test(response), sentBytes, body });
      }
    });
  });
  return { answered, socket };
}
