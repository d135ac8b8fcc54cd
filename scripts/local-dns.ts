import dns2 from 'dns2';
import { loadConfig } from '../core/config';
import { BOUNCE_SUBDOMAIN } from '../core/bounces/return-path';
import { domainRecords, type DnsRecord, txtStrings } from '../core/dns-records';
import { findDomainAnywhere } from '../db/repositories/domains';
import { createSequelize } from '../db/sequelize';

/**
 * Local development only (`npm start` runs it and points DNS_SERVERS at it): an authoritative DNS server
 * that publishes, for every domain added to the local service, exactly the records the API asks its owner
 * to publish, and the platform's SPF include host. Domains then verify through the real verification path
 * (real DNS queries, SPF walk, DKIM key comparison) within seconds, so mail can be sent locally and seen in
 * the mail catcher. Any other name is NXDOMAIN: nothing is forwarded anywhere.
 */
const { Packet } = dns2;
const NXDOMAIN = 3;
const port = Number(process.env.LOCAL_DNS_PORT ?? 5354);
const config = loadConfig(process.env);
const db = createSequelize(config.DATABASE_URL);
const settings = { spfInclude: config.PLATFORM_SPF_INCLUDE, inboundMxHost: config.INBOUND_MX_HOST };

/** The domain a record name belongs to: `_dmarc.<domain>`, `<selector>._domainkey.<domain>` or the domain. */
function owningDomain(name: string): string {
  if (name.startsWith('_dmarc.')) return name.slice('_dmarc.'.length);
  const dkim = name.indexOf('._domainkey.');
  return dkim >= 0 ? name.slice(dkim + '._domainkey.'.length) : name;
}

async function recordsFor(name: string): Promise<DnsRecord[]> {
  if (name === settings.spfInclude) return [{ record: 'spf', type: 'TXT', name, value: 'v=spf1 ip4:127.0.0.1 -all', ttl: 60 }];
  // `bounces.<domain>` is the domain's return path (its MX and SPF), unless it is a sending domain itself.
  const bounceParent = name.startsWith(`${BOUNCE_SUBDOMAIN}.`) ? name.slice(BOUNCE_SUBDOMAIN.length + 1) : null;
  const domain = (await findDomainAnywhere(db, owningDomain(name))) ?? (bounceParent ? await findDomainAnywhere(db, bounceParent) : null);
  return domain ? domainRecords(domain, settings).filter((record) => record.name === name) : [];
}

const handle = async (request: dns2.Packet, send: (response: dns2.Packet) => void) => {
  const response = Packet.createResponseFromRequest(request);
  response.header.aa = 1;
  const [question] = request.questions;
  const name = question?.name.toLowerCase().replace(/\.$/, '') ?? '';
  const records = question ? await recordsFor(name).catch(() => []) : [];
  if (records.length === 0) response.header.rcode = NXDOMAIN;
  for (const record of records) {
    if (record.type === 'TXT' && question.type === Packet.TYPE.TXT) {
      response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data: txtStrings(record.value) } as dns2.Packet.Resource);
    }
    if (record.type === 'MX' && question.type === Packet.TYPE.MX) {
      response.answers.push({ name: question.name, type: Packet.TYPE.MX, class: Packet.CLASS.IN, ttl: 60, exchange: record.value, priority: record.priority } as dns2.Packet.Resource);
    }
  }
  send(response);
};

const udp = dns2.createUDPServer(handle as dns2.DnsHandler);
const tcp = dns2.createTCPServer(handle as dns2.DnsHandler);
void udp.listen(port, '127.0.0.1');
tcp.listen(port, '127.0.0.1');
const stop = () => {
  udp.close();
  tcp.close();
  void db.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
