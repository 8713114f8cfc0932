import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ServiceContext } from '../../services/context.js';
import {
  findOrCreateCustomer,
  getCustomer,
  listCustomers,
  updateCustomer,
} from '../../services/customers.js';
import { actorOf } from '../auth.js';
import { customerDetailOut, customerOut } from '../mail-schemas.js';
import { itemsOf } from '../response-schemas.js';
import { email, errors, idParams, pageQuery, text } from '../schemas.js';

const organisation = z.string().trim().max(200).nullable();

/** Customers: agents and integrations with tickets:read read them, with tickets:write find or create and change them. */
export function customerRoutes(ctx: ServiceContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/customers',
      {
        config: { access: { least: 'agent', scope: 'tickets:read' } },
        schema: {
          tags: ['mail'],
          summary:
            'List customers, optionally those whose address or name contains q; an agent who sees some teams’ tickets only sees the customers of those tickets',
          querystring: z.object({ q: z.string().trim().max(320).optional(), ...pageQuery }),
          response: { 200: itemsOf(customerOut), ...errors },
        },
      },
      async (request) => ({
        items: await listCustomers(
          ctx,
          {
            search: request.query.q || null,
            limit: request.query.limit,
            offset: request.query.offset,
          },
          actorOf(request),
        ),
      }),
    );

    app.get(
      '/api/customers/:id',
      {
        config: { access: { least: 'agent', scope: 'tickets:read' } },
        schema: {
          tags: ['mail'],
          summary: 'A customer with their tickets (404 when the caller sees none of their tickets)',
          params: idParams,
          response: { 200: customerDetailOut, ...errors },
        },
      },
      async (request) => getCustomer(ctx, request.params.id, actorOf(request)),
    );

    app.post(
      '/api/customers',
      {
        config: { access: { least: 'agent', scope: 'tickets:write' } },
        schema: {
          tags: ['mail'],
          summary:
            'Find the customer with this address (case-insensitive), or create one: 200 found, 201 created; 409 when the customer exists but none of their tickets is the caller’s to see',
          body: z.strictObject({
            email,
            name: z.string().trim().max(200).optional(),
            organisation: organisation.optional(),
          }),
          response: { 200: customerOut, 201: customerOut, ...errors },
        },
      },
      async (request, reply) => {
        const { customer, created } = await findOrCreateCustomer(
          ctx,
          request.body,
          actorOf(request),
        );
        return reply.code(created ? 201 : 200).send(customer);
      },
    );

    app.patch(
      '/api/customers/:id',
      {
        config: { access: { least: 'agent', scope: 'tickets:write' } },
        schema: {
          tags: ['mail'],
          summary:
            "Change a customer's address, name or organisation (404 when the caller sees none of their tickets)",
          params: idParams,
          body: z
            .strictObject({
              email: email.optional(),
              name: text(200).optional(),
              organisation: organisation.optional(),
            })
            .refine((body) => Object.keys(body).length > 0, {
              error: 'give at least one field to change',
            }),
          response: { 200: customerOut, ...errors },
        },
      },
      async (request) => updateCustomer(ctx, request.params.id, request.body, actorOf(request)),
    );
  };
}
