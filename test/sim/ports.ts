// Ports the simulator listens on again after a simulated restart (an API outage, a node reboot, a simulator process
// started again on its state directory) are taken below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range, Documentation/networking/ip-sysctl.rst): a port the kernel hands out for port 0
// comes from that range, and between two listens any outgoing connection on the machine may take it as its source
// port, so the second listen fails with EADDRINUSE (seen in fresh-clone runs, several simulators at once).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 10_000;

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) ? low : 32_768;
  } catch {
    return 32_768;
  }
}

function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

/** A free port to listen on now and again later: below the ephemeral range when there is room, else any free one. */
export async function stablePort(host = '127.0.0.1'): Promise<number> {
  const high = ephemeralLow() - 1;
  if (high > LOWEST) {
    for (let tries = 0; tries < 100; tries++) {
      const port = LOWEST + Math.floor(Math.random() * (high - LOWEST));
      if (await canListen(port, host)) return port;
    }
  }
  return 0;
}
