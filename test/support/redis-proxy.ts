/** TCP proxies in front of the machine's Redis, to make it hang for one client (tests in test/scale). */
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

