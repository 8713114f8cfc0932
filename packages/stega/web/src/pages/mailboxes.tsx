import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../api.js';
import {
  CheckField,
  choicesOf,
  PRIORITY_CHOICES,
  SelectField,
  TextField,
} from '../components/form-fields.js';
import { LoadState, Section } from '../components/layout.js';
import { SaveFeedback } from '../components/save-feedback.js';
import { getQuery, teamsQuery } from '../data/queries.js';
import { label } from '../format.js';
import { useSave } from '../hooks/use-save.js';
import { useTitle } from '../hooks/use-title.js';
import type { Priority, Team } from '../types.js';

/** A mailbox as GET /api/mailboxes shows it: secrets only as "is set". */
interface Mailbox {
  id: number;
  address: string;
  display_name: string;
  team_id: number | null;
  priority: Priority;
  enabled: boolean;
  acknowledge: boolean;
  imap: {
    host: string;
    port: number;
    tls: boolean;
    username: string;
    folder: string;
    auth: 'password' | 'xoauth2';
    secret_set: boolean;
  } | null;
  webhook: { provider: 'mailgun'; secret_set: boolean } | null;
}

const mailboxKey = ['mailboxes'] as const;
const mailboxesQuery = () => getQuery<{ items: Mailbox[] }>(mailboxKey, '/api/mailboxes');

/** Settings › Mailboxes (admins): the support addresses whose mail becomes tickets. */
export function MailboxesPage() {
  useTitle('Mailboxes');
  const mailboxes = useQuery({ ...mailboxesQuery(), refetchInterval: 30_000 });
  const teams = useQuery(teamsQuery());
  const list = mailboxes.data?.items ?? [];
  const teamList = teams.data?.items ?? [];
  const refresh = () => void mailboxes.refetch();
  return (
    <div className="page">
      <h1>Mailboxes</h1>
      <p className="muted">
        Mail to a support address becomes a ticket of the mailbox’s team and priority; replies join
        their ticket. Mail arrives through Stega’s SMTP listener (point an MX record or a relay at
        it), by polling the mailbox over IMAP, or from a provider’s inbound webhook. Passwords and
        keys are stored but never shown again.
      </p>
      <Section id="mailboxes" title={`Mailboxes (${list.length})`}>
        <LoadState
          loading={mailboxes.isPending}
          error={mailboxes.error}
          empty={list.length === 0}
          emptyText="No mailbox yet: mail to Stega is refused until one is added."
        />
        {list.map((mailbox) => (
          <MailboxCard key={mailbox.id} mailbox={mailbox} teams={teamList} onSaved={refresh} />
        ))}
        <MailboxForm teams={teamList} onSaved={refresh} />
      </Section>
    </div>
  );
}

function MailboxCard({
  mailbox,
  teams,
  onSaved,
}: {
  mailbox: Mailbox;
  teams: Team[];
  onSaved: () => void;
}) {
  const [editing, setEditing] = useState(false);
  if (editing) {
    return (
      <MailboxForm
        mailbox={mailbox}
        teams={teams}
        onSaved={() => {
          setEditing(false);
          onSaved();
        }}
        onCancel={() => setEditing(false)}
      />
    );
  }
  const team = teams.find((t) => t.id === mailbox.team_id);
  return (
    <article
      className="card"
      data-mailbox-id={mailbox.id}
      aria-label={`Mailbox ${mailbox.address}`}
    >
      <h3>
        {mailbox.display_name} <span className="muted">&lt;{mailbox.address}&gt;</span>
        {mailbox.enabled ? null : <strong className="badge"> disabled</strong>}
      </h3>
      <p>
        New tickets: team {team?.name ?? 'none'}, priority {label(mailbox.priority)}
        {mailbox.acknowledge ? '; the customer gets a “we got your request” email' : ''}.
      </p>
      <p className="muted">
        Arrives by SMTP
        {mailbox.imap
          ? `; IMAP ${mailbox.imap.username} at ${mailbox.imap.host}:${mailbox.imap.port} (${mailbox.imap.folder}, ${mailbox.imap.auth === 'xoauth2' ? 'OAuth2 token' : 'password'} ${mailbox.imap.secret_set ? 'stored' : 'missing'})`
          : ''}
        {mailbox.webhook
          ? `; ${label(mailbox.webhook.provider)} webhook at /api/mail/inbound/${mailbox.webhook.provider}/${mailbox.id}/mime`
          : ''}
        .
      </p>
      <button type="button" className="secondary small" onClick={() => setEditing(true)}>
        Edit {mailbox.address}
      </button>
    </article>
  );
}

function MailboxForm({
  mailbox,
  teams,
  onSaved,
  onCancel,
}: {
  mailbox?: Mailbox;
  teams: Team[];
  onSaved: () => void;
  onCancel?: () => void;
}) {
  const [address, setAddress] = useState(mailbox?.address ?? '');
  const [displayName, setDisplayName] = useState(mailbox?.display_name ?? '');
  const [team, setTeam] = useState(mailbox?.team_id ? String(mailbox.team_id) : '');
  const [priority, setPriority] = useState<string>(mailbox?.priority ?? 'normal');
  const [enabled, setEnabled] = useState(mailbox?.enabled ?? true);
  const [acknowledge, setAcknowledge] = useState(mailbox?.acknowledge ?? true);
  const [useImap, setUseImap] = useState(Boolean(mailbox?.imap));
  const [host, setHost] = useState(mailbox?.imap?.host ?? '');
  const [port, setPort] = useState(String(mailbox?.imap?.port ?? 993));
  const [tls, setTls] = useState(mailbox?.imap?.tls ?? true);
  const [username, setUsername] = useState(mailbox?.imap?.username ?? '');
  const [folder, setFolder] = useState(mailbox?.imap?.folder ?? 'INBOX');
  const [auth, setAuth] = useState<string>(mailbox?.imap?.auth ?? 'password');
  const [imapSecret, setImapSecret] = useState('');
  const [useWebhook, setUseWebhook] = useState(Boolean(mailbox?.webhook));
  const [webhookSecret, setWebhookSecret] = useState('');
  const save = useSave([mailboxKey]);
  const prefix = mailbox ? `mailbox-${mailbox.id}` : 'new-mailbox';
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await save.run(async () => {
      const body = {
        address,
        display_name: displayName,
        team_id: team === '' ? null : Number(team),
        priority,
        enabled,
        acknowledge,
        imap: useImap
          ? {
              host,
              port: Number(port),
              tls,
              username,
              folder,
              auth,
              ...(imapSecret === '' ? {} : { secret: imapSecret }),
            }
          : null,
        webhook: useWebhook
          ? { provider: 'mailgun', ...(webhookSecret === '' ? {} : { secret: webhookSecret }) }
          : null,
      };
      const saved = mailbox
        ? await api<Mailbox>('PATCH', `/api/mailboxes/${mailbox.id}`, body)
        : await api<Mailbox>('POST', '/api/mailboxes', body);
      setImapSecret('');
      setWebhookSecret('');
      if (!mailbox) {
        setAddress('');
        setDisplayName('');
        setUseImap(false);
        setUseWebhook(false);
      }
      save.setSaved(`Mailbox ${saved.address} saved.`);
      onSaved();
    });
  };
  const secretHint = (isSet: boolean | undefined) =>
    isSet ? 'Stored; leave empty to keep it.' : 'Stored, never shown again.';
  // the stored IMAP secret is only sent to the server and account it was given for
  const stored = mailbox?.imap;
  const accountChanged =
    stored != null &&
    (host.trim().toLowerCase() !== stored.host.toLowerCase() ||
      Number(port) !== stored.port ||
      tls !== stored.tls ||
      username !== stored.username ||
      auth !== stored.auth);
  const imapSecretHint = !stored?.secret_set
    ? secretHint(false)
    : accountChanged
      ? `Give the ${auth === 'xoauth2' ? 'access token' : 'password'} again: you changed the server or the user name.`
      : 'Stored; leave empty to keep it. Give it again when you change the server or the user name.';
  return (
    <form
      onSubmit={submit}
      noValidate
      className="form"
      aria-label={mailbox ? `Edit mailbox ${mailbox.address}` : 'New mailbox'}
    >
      <h3>{mailbox ? `Edit ${mailbox.address}` : 'Add a mailbox'}</h3>
      <SaveFeedback save={save} idPrefix={prefix} />
      <div className="row">
        <TextField
          path="address"
          idPrefix={prefix}
          label="Support address"
          issues={save.issues}
          hint="e.g. support@acme.test"
          value={address}
          onChange={setAddress}
          input={{ type: 'email', autoComplete: 'off' }}
        />
        <TextField
          path="display_name"
          idPrefix={prefix}
          label="Display name"
          issues={save.issues}
          hint="e.g. Acme Support"
          value={displayName}
          onChange={setDisplayName}
        />
        <SelectField
          path="team_id"
          idPrefix={prefix}
          label="Team of new tickets"
          issues={save.issues}
          value={team}
          onChange={setTeam}
          choices={choicesOf(teams, [{ value: '', label: 'No team' }])}
        />
        <SelectField
          path="priority"
          idPrefix={prefix}
          label="Priority of new tickets"
          issues={save.issues}
          value={priority}
          onChange={setPriority}
          choices={PRIORITY_CHOICES}
        />
      </div>
      <CheckField checked={enabled} onChange={setEnabled}>
        Enabled (mail to a disabled mailbox is refused)
      </CheckField>
      <CheckField checked={acknowledge} onChange={setAcknowledge}>
        Answer a new ticket with a “we got your request” email (never to automatic or list mail)
      </CheckField>
      <fieldset>
        <legend>IMAP</legend>
        <CheckField checked={useImap} onChange={setUseImap}>
          Poll this mailbox over IMAP
        </CheckField>
        {useImap ? (
          <div className="row">
            <TextField
              path="imap.host"
              idPrefix={prefix}
              label="IMAP server"
              issues={save.issues}
              hint="imap.gmail.com, outlook.office365.com"
              value={host}
              onChange={setHost}
            />
            <TextField
              path="imap.port"
              idPrefix={prefix}
              label="Port"
              issues={save.issues}
              value={port}
              onChange={setPort}
              input={{ inputMode: 'numeric' }}
            />
            <TextField
              path="imap.username"
              idPrefix={prefix}
              label="User name"
              issues={save.issues}
              value={username}
              onChange={setUsername}
              input={{ autoComplete: 'off' }}
            />
            <TextField
              path="imap.folder"
              idPrefix={prefix}
              label="Folder"
              issues={save.issues}
              value={folder}
              onChange={setFolder}
            />
            <SelectField
              path="imap.auth"
              idPrefix={prefix}
              label="Sign-in"
              issues={save.issues}
              value={auth}
              onChange={setAuth}
              choices={[
                { value: 'password', label: 'Password (app password)' },
                { value: 'xoauth2', label: 'OAuth2 access token (XOAUTH2)' },
              ]}
            />
            <TextField
              path="imap.secret"
              idPrefix={prefix}
              label={auth === 'xoauth2' ? 'Access token' : 'Password'}
              issues={save.issues}
              hint={imapSecretHint}
              value={imapSecret}
              onChange={setImapSecret}
              input={{ type: 'password', autoComplete: 'new-password' }}
            />
            <CheckField checked={tls} onChange={setTls}>
              TLS from the start (port 993)
            </CheckField>
          </div>
        ) : null}
      </fieldset>
      <fieldset>
        <legend>Provider webhook</legend>
        <CheckField checked={useWebhook} onChange={setUseWebhook}>
          Accept mail posted by Mailgun
        </CheckField>
        {useWebhook ? (
          <TextField
            path="webhook.secret"
            idPrefix={prefix}
            label="Mailgun webhook signing key"
            issues={save.issues}
            hint={secretHint(mailbox?.webhook?.secret_set)}
            value={webhookSecret}
            onChange={setWebhookSecret}
            input={{ type: 'password', autoComplete: 'new-password' }}
          />
        ) : null}
      </fieldset>
      <div className="actions">
        <button type="submit" className="primary" disabled={save.busy}>
          {mailbox ? 'Save mailbox' : 'Add mailbox'}
        </button>
        {onCancel ? (
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}
