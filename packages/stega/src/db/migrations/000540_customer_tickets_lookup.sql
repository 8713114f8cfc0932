-- A customer's tickets are found by their record or by the requester's address
-- (tickets made through the API carry no customer_id): the address side gets an index, so
-- that "the customers an agent may see" (those with a ticket the agent sees) and a
-- customer's ticket list are index lookups rather than scans of every ticket.
create index if not exists tickets_requester_email_lower_idx
  on stega.tickets (lower(requester_email));
