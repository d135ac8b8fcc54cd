import { created, ok, type RouteTable } from '../http/route';
import {
  CreateDomainBody,
  DomainCreatedSchema,
  DomainInUseSchema,
  DomainInboundSchema,
  DomainListSchema,
  DomainParams,
  DomainSchema,
  DomainVerifySchema,
  UpdateDomainBody,
} from './schemas';
import type { DomainService } from './service';
import { domainCreatedView, domainInboundView, domainVerifyView, domainView } from './views';

export function domainRoutes(routes: RouteTable, domains: DomainService): void {
  const { settings } = domains;
  const notFound = { description: 'No such domain in this workspace' };

  routes.get('/domains', 'domains:write', {
    summary: 'List the workspace\'s sending domains',
    responses: { 200: { description: 'Domains, newest first', schema: DomainListSchema } },
    handle: async ({ principal }) => ok({ domains: (await domains.list(principal.workspaceId)).map((domain) => domainView(domain, settings)) }),
  });

  routes.post('/domains', 'domains:write', {
    summary: 'Add a sending domain; answers the DNS records to publish',
    body: CreateDomainBody,
    responses: {
      201: { description: 'Created, pending until its records check', schema: DomainCreatedSchema },
      409: { description: 'The domain is already added to this workspace, or verified by another one' },
    },
    handle: async ({ principal, body }) => created(domainCreatedView(await domains.create(principal.workspaceId, body), settings)),
  });

  routes.get('/domains/:id', 'domains:write', {
    summary: 'A domain with each record\'s status and a zone-file snippet',
    params: DomainParams,
    responses: { 200: { description: 'The domain', schema: DomainSchema }, 404: notFound },
    handle: async ({ principal, params }) => ok(domainView(await domains.get(principal.workspaceId, params.id), settings)),
  });

  routes.patch('/domains/:id', 'domains:write', {
    summary: 'Set the default sender (display name and address) of a domain',
    params: DomainParams,
    body: UpdateDomainBody,
    responses: { 200: { description: 'The updated domain', schema: DomainSchema }, 404: notFound },
    handle: async ({ principal, params, body }) => ok(domainView(await domains.update(principal.workspaceId, params.id, body), settings)),
  });

  routes.delete('/domains/:id', 'domains:write', {
    summary: 'Delete a domain nothing sends from; its DKIM keys go with it, the mail it sent stays',
    params: DomainParams,
    responses: {
      204: { description: 'Deleted' },
      404: notFound,
      409: { description: 'conflict: campaigns, journeys or inboxes still use the domain (named in usedBy)', schema: DomainInUseSchema },
    },
    handle: async ({ principal, params }) => {
      await domains.remove(principal.workspaceId, params.id);
      return { status: 204 };
    },
  });

  routes.post('/domains/:id/verify', 'domains:write', {
    summary: 'Check SPF, DKIM and DMARC now',
    params: DomainParams,
    responses: {
      200: { description: 'The verdict: verified, or failed with a detail saying what to fix', schema: DomainVerifySchema },
      404: notFound,
      503: { description: 'The check could not run now (background workers unreachable or too slow)' },
    },
    handle: async ({ principal, params }) => ok(domainVerifyView(await domains.verify(principal.workspaceId, params.id), settings)),
  });

  routes.post('/domains/:id/inbound', 'domains:write', {
    summary: 'Enable inbound mail; answers the MX host to publish',
    params: DomainParams,
    responses: { 200: { description: 'Inbound enabled', schema: DomainInboundSchema }, 404: notFound },
    handle: async ({ principal, params }) => ok(domainInboundView(await domains.setInbound(principal.workspaceId, params.id, true), settings)),
  });

  routes.delete('/domains/:id/inbound', 'domains:write', {
    summary: 'Disable inbound mail',
    params: DomainParams,
    responses: { 200: { description: 'Inbound disabled', schema: DomainInboundSchema }, 404: notFound },
    handle: async ({ principal, params }) => ok(domainInboundView(await domains.setInbound(principal.workspaceId, params.id, false), settings)),
  });
}
