/** TCP proxies in front of the machine's Redis, to make it hang or go away for one client (tests in test/scale). */
import net from 'node:net';

/** A TCP proxy to Redis that can hold back what its clients send (Redis then seems to hang). */
export class HoldingProxy {
  private server: net.Server | null = null;
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  private holding = false;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async open(): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      const pair = { client, upstream };
      this.pairs.add(pair);
      for (const s of [client, upstream]) s.on('error', () => undefined);
      upstream.pipe(client);
      if (!this.holding) client.pipe(upstream);
      else client.pause();
      const drop = () => {
        this.pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on('close', drop);
      upstream.on('close', drop);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  hold(): void {
    this.holding = true;
    for (const { client, upstream } of this.pairs) {
      client.unpipe(upstream);
      client.pause();
    }
  }

  release(): void {
    this.holding = false;
    for (const { client, upstream } of this.pairs) client.pipe(upstream);
  }

  async close(): Promise<void> {
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    await new Promise((r) => this.server?.close(r));
  }
}


/**
 * A TCP proxy to Redis that can be cut (its connections dropped, new ones closed at once: Redis seems
 * down) and restored. `refused` counts the connections closed since the cut: a client that tries to
 * reconnect has noticed that Redis is away.
 */
export class CuttableProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  private isCut = false;
  refused = 0;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async open(): Promise<void> {
    this.server = net.createServer((client) => {
      client.on('error', () => undefined);
      if (this.isCut) {
        this.refused++;
        return void client.destroy();
      }
      const upstream = net.connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  /** Resolves once every connection it had is closed. */
  async cut(): Promise<void> {
    this.isCut = true;
    this.refused = 0;
    const closing = [...this.sockets].map((s) => new Promise((r) => (s.closed ? r(null) : s.once('close', r))));
    for (const s of this.sockets) s.destroy();
    await Promise.all(closing);
  }

  restore(): void {
    this.isCut = false;
  }

  async close(): Promise<void> {
    await this.cut();
    await new Promise((r) => this.server?.close(r));
  }
}
