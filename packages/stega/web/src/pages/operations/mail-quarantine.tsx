import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api.js';
import { LoadState, Section } from '../../components/layout.js';
import { getQuery } from '../../data/queries.js';
import { formatDateTime } from '../../format.js';
import { readToken } from '../../session.js';

interface Quarantined {
  id: number;
  from_address: string | null;
  envelope_from: string | null;
  subject: string | null;
  received_at: string;
  source: string;
  reason: string | null;
  size_bytes: number;
}

/** Opens a message's source (the session's token; a plain link would carry none). */
async function openSource(id: number): Promise<void> {
  const response = await fetch(`/api/inbound-mail/${id}/source`, {
    headers: { authorization: `Bearer ${readToken() ?? ''}` },
  });
  if (!response.ok) return;
  const url = URL.createObjectURL(await response.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = `message-${id}.eml`;
  a.click();
  URL.revokeObjectURL(url);
}

/** Mail that could not be filed, with the reason: retry it, discard it, or read its source. */
export function MailQuarantineSection() {
  const list = useQuery({
    ...getQuery<{ items: Quarantined[] }>(
      ['inbound-mail', 'quarantined'],
      '/api/inbound-mail?state=quarantined&limit=100',
    ),
    refetchInterval: 5000,
  });
  const [notice, setNotice] = useState<string | undefined>();
  const act = async (id: number, action: 'retry' | 'discard') => {
    try {
      await api('POST', `/api/inbound-mail/${id}/${action}`);
      setNotice(
        action === 'retry' ? `Message ${id} is being filed again.` : `Message ${id} discarded.`,
      );
    } catch (error) {
      setNotice((error as Error).message);
    }
    void list.refetch();
  };
  const items = list.data?.items ?? [];
  return (
    <Section id="mail-quarantine" title={`Mail quarantine (${items.length})`}>
      <p role="status" className="notice" hidden={!notice}>
        {notice}
      </p>
      <LoadState
        loading={list.isPending}
        error={list.error}
        empty={items.length === 0}
        emptyText="Nothing in quarantine: every message received was filed or ignored with its reason."
      />
      {items.length > 0 ? (
        <table>
          <thead>
            <tr>
              <th>Received</th>
              <th>From</th>
              <th>Subject</th>
              <th>Why</th>
              <th>Actions</th>
            </tr>
          </thead>
          <tbody>
            {items.map((m) => (
              <tr key={m.id} data-inbound-mail-id={m.id}>
                <td>{formatDateTime(m.received_at)}</td>
                <td>{m.from_address ?? m.envelope_from ?? '—'}</td>
                <td>{m.subject ?? '—'}</td>
                <td>{m.reason}</td>
                <td>
                  <button
                    type="button"
                    className="secondary small"
                    onClick={() => void act(m.id, 'retry')}
                  >
                    Retry
                  </button>{' '}
                  <button
                    type="button"
                    className="secondary small"
                    onClick={() => void act(m.id, 'discard')}
                  >
                    Discard
                  </button>{' '}
                  <button
                    type="button"
                    className="link-button"
                    onClick={() => void openSource(m.id)}
                  >
                    Source
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Section>
  );
}
