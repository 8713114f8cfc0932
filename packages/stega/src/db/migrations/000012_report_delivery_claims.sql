-- A weekly report's delivery is claimed (committed) before its SMTP or webhook call and its
-- outcome recorded after it, so no transaction or row lock spans the call. The claim carries
-- a token and a lease: an outcome only lands on the claim that made it, and a claim whose
-- lease ran out (its worker died mid-call) is claimed again, the resend with the same key.
alter table stega.report_deliveries
  add column claim_token text,
  add column claim_until timestamptz;
