import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { CidrError, internalAddressProblem, parseInternalAddresses, parseInternalCidr, renderDispatcherScript, renderNodeIpDropins, renderNodeIpHint } from '../../../src/render/internal-ip';

describe('parseInternalCidr', () => {
  test('IPv4: canonical address, prefix and subnet address', () => {
    assert.deepEqual(parseInternalCidr('192.168.127.10/24'), { family: 4, address: '192.168.127.10', prefix: 24, cidr: '192.168.127.10/24', network: '192.168.127.0' });
    assert.equal(parseInternalCidr('10.1.2.3/8').network, '10.0.0.0');
    assert.equal(parseInternalCidr('172.16.0.1/32').network, '172.16.0.1');
  });

  test('IPv6: RFC 5952 text, as `ip addr` prints it', () => {
    const a = parseInternalCidr('FD00:0127:0000:0000:0000:0000:0000:0010/64');
    assert.equal(a.address, 'fd00:127::10');
    assert.equal(a.network, 'fd00:127::');
    assert.equal(a.cidr, 'fd00:127::10/64');
    assert.equal(parseInternalCidr('2001:db8:0:0:1:0:0:1/64').address, '2001:db8::1:0:0:1');
    assert.equal(parseInternalCidr('2001:db8::ffff:10.0.0.1/96').address, '2001:db8::ffff:a00:1');
  });

  test('rejects what is not a host address, naming the flag and the value', () => {
    const cases: [string, RegExp][] = [
      ['192.168.127.10', /expected ADDRESS\/PREFIX/],
      ['192.168.127.256/24', /is not an IPv4 or IPv6 address/],
      ['192.168.127.0/24', /is the subnet address of \/24; give the node's own address, e.g. 192.168.127.10\/24/],
      ['192.168.127.255/24', /broadcast/],
      ['192.168.127.10/33', /out of range/],
      ['127.0.0.5/8', /not a unicast host address/],
      ['169.254.3.4/16', /not a unicast host address/],
      ['fe80::10/64', /link-local/],
      ['ff02::1/64', /not a unicast host address/],
      ['1:2:3/64', /not an IPv4 or IPv6 address/],
      ['1::2::3/64', /not an IPv4 or IPv6 address/],
    ];
    for (const [input, re] of cases) {
      assert.throws(() => parseInternalCidr(input), (e: unknown) => e instanceof CidrError && e.message.startsWith(`--internal-ip "${input}"`) && re.test(e.message), input);
    }
  });

  test('at most one address per family; IPv4 first', () => {
    assert.deepEqual(parseInternalAddresses(['fd00::10/64', '192.168.127.10/24']).map((a) => a.family), [4, 6]);
    assert.throws(() => parseInternalAddresses(['192.168.127.10/24', '10.0.0.10/24']), /at most one IPv4 address/);
  });
});

describe('node IP pinning', () => {
  const both = parseInternalAddresses(['192.168.127.10/24', 'fd00:127::10/64']);

  test('KUBELET_NODEIP_HINT carries one subnet address per family, quoted for EnvironmentFile= and sh', () => {
    assert.match(renderNodeIpHint(both), /^KUBELET_NODEIP_HINT="192\.168\.127\.0 fd00:127::"$/m);
  });

  test('the drop-ins set what baremetal-runtimecfg would have set', () => {
    const d = renderNodeIpDropins(both);
    assert.match(d.kubelet, /^Environment="KUBELET_NODE_IP=192\.168\.127\.10" "KUBELET_NODE_IPS=192\.168\.127\.10,fd00:127::10"$/m);
    assert.match(d.crio, /^Environment="CONTAINER_STREAM_ADDRESS=192\.168\.127\.10"$/m);
  });

  test('the dispatcher script adds each address (IPv6 without DAD) on br-ex only', () => {
    const s = renderDispatcherScript(both);
    assert.match(s, /^\[ "\$interface" = br-ex \] \|\| exit 0$/m);
    assert.match(s, /^add_address 4 192\.168\.127\.10\/24$/m);
    assert.match(s, /^add_address 6 fd00:127::10\/64 nodad$/m);
  });
});

describe('internalAddressProblem: the internal IP must be the node\'s installed IP (seed 000)', () => {
  test('addresses compare as addresses, not text', () => {
    assert.equal(internalAddressProblem(['fd00::10'], 'sno1', ['192.168.111.20', 'fd00:0:0:0:0:0:0:10']), undefined);
    assert.equal(internalAddressProblem(['192.168.111.20'], 'sno1', ['192.168.111.20']), undefined);
  });
  test('names the foreign address and the installed ones', () => {
    assert.equal(
      internalAddressProblem(['192.168.127.10', 'fd00::10'], 'sno1', ['fd00::10', '192.168.111.20']),
      "internal IP 192.168.127.10 is not the node's installed IP: Node sno1 has InternalIP fd00::10, 192.168.111.20, and etcd's peer URL and certificates are for that",
    );
    assert.match(internalAddressProblem(['192.168.111.20'], 'sno1', []) ?? '', /Node sno1 reports no InternalIP address/);
  });
});
