// Stega's service worker: shows the pushes Stega sends (packages/stega/src/delivery/channels/push.ts)
// and answers their actions. Served as /sw.js (scope /), registered by "How to reach me".
//  - a page (`type: page`): a notification with the actions Acknowledge (when the push carries
//    an `ack_token`) and Open; its tag is the delivery's key, so a push that arrived twice
//    shows once. Acknowledge posts the token to /api/push/acknowledge (no session needed:
//    the token is signed for this person and this push) and says what happened; Open, or a
//    click on the notification, opens the ticket.
//  - a test push (`type: verify`): shows the code and hands it to the open "How to reach me"
//    pages, which confirm it; clicked, it opens that page with the code filled in.

const ACK_PATH = '/api/push/acknowledge';
const REACH_ME_PATH = '/reach-me';

self.addEventListener('install', () => {
  self.skipWaiting();
});

self.addEventListener('activate', (event) => {
  event.waitUntil(self.clients.claim());
});

function readPayload(event) {
  if (!event.data) return null;
  try {
    return event.data.json();
  } catch {
    return { type: 'text', title: 'Stega', body: event.data.text() };
  }
}

self.addEventListener('push', (event) => {
  const data = readPayload(event);
  if (!data) return;
  if (data.type === 'verify') {
    event.waitUntil(
      Promise.all([
        self.registration.showNotification(data.title, {
          body: data.body,
          tag: `stega-verify-${data.contact_method_id}`,
          data,
        }),
        self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((windows) => {
          for (const client of windows) {
            client.postMessage({
              type: 'stega-push-verify',
              contact_method_id: data.contact_method_id,
              code: data.code,
            });
          }
        }),
      ]),
    );
    return;
  }
  const actions = (data.actions ?? []).map((action) => ({
    action,
    title: action === 'acknowledge' ? 'Acknowledge' : 'Open',
  }));
  event.waitUntil(
    self.registration.showNotification(data.title ?? 'Stega', {
      body: data.body ?? '',
      tag: data.tag,
      data,
      actions,
      requireInteraction: data.urgency === 'high',
      renotify: false,
    }),
  );
});

async function openWindow(url) {
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const client of windows) {
    if (client.url === url && 'focus' in client) return client.focus();
  }
  return self.clients.openWindow(url);
}

async function acknowledge(data) {
  let text;
  try {
    const response = await fetch(new URL(ACK_PATH, self.registration.scope), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: data.ack_token }),
      credentials: 'omit',
    });
    const answer = await response.json().catch(() => ({}));
    text = response.ok
      ? answer.message
      : `Not acknowledged: ${answer.message ?? `the server answered ${response.status}`}`;
  } catch {
    text = 'Not acknowledged: Stega could not be reached. Open the ticket to acknowledge.';
  }
  await self.registration.showNotification(data.title ?? 'Stega', {
    body: text,
    tag: data.tag,
    data: { ...data, actions: ['open'], ack_token: null },
    actions: [{ action: 'open', title: 'Open' }],
  });
}

self.addEventListener('notificationclick', (event) => {
  const data = event.notification.data ?? {};
  event.notification.close();
  if (data.type === 'verify') {
    const url = new URL(REACH_ME_PATH, self.registration.scope);
    url.searchParams.set('verify', String(data.contact_method_id));
    url.searchParams.set('code', String(data.code));
    event.waitUntil(openWindow(url.href));
    return;
  }
  if (event.action === 'acknowledge' && data.ack_token) {
    event.waitUntil(acknowledge(data));
    return;
  }
  const target = data.url ?? new URL(`/tickets/${data.ticket_id}`, self.registration.scope).href;
  event.waitUntil(openWindow(target));
});
