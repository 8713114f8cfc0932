import { useQuery } from '@tanstack/react-query';
import { DataTable } from '../../components/data-table.js';
import { LoadState, Section } from '../../components/layout.js';
import { keys, pathQuery } from '../../data/queries.js';
import { formatDateTime, formatNumber } from '../../format.js';
import type { JobOverview } from '../../types.js';

type JobRun = JobOverview['runs'][number];

/** The background jobs: recent runs, what is queued or running, and the schedule. */
export function JobSection() {
  const jobs = useQuery({
    ...pathQuery<JobOverview>(keys.operations, '/api/job-runs?limit=12'),
    refetchInterval: 5000,
  });
  const data = jobs.data;
  return (
    <Section id="jobs" title="Jobs">
      <LoadState loading={jobs.isPending} error={jobs.error} empty={!data} />
      {data ? (
        <div className="grid-2">
          <div>
            <h3>Recent runs</h3>
            {data.runs.length === 0 ? <p className="muted">No run recorded yet.</p> : null}
            {data.runs.length > 0 ? <RunTable runs={data.runs} /> : null}
          </div>
          <div>
            <h3>Queued and running</h3>
            <QueuedJobs jobs={data.queued} />
            <h3>Schedule</h3>
            <ul className="plain">
              {data.cron.map((c) => (
                <li key={c.identifier}>
                  <strong>{c.identifier}</strong>: last scheduled {formatDateTime(c.last_execution)}
                </li>
              ))}
            </ul>
          </div>
        </div>
      ) : null}
    </Section>
  );
}

function RunTable({ runs }: { runs: JobRun[] }) {
  return (
    <DataTable<JobRun>
      label="Recent job runs"
      rows={runs}
      rowKey={(run) => run.id}
      columns={[
        { header: 'Finished', cell: (run) => formatDateTime(run.finished_at) },
        {
          header: 'Job',
          cell: (run) => (
            <span>
              {run.task} <span className="muted small">#{run.job_id}</span>
            </span>
          ),
        },
        {
          header: 'Result',
          cell: (run) =>
            run.error ? (
              <span className="error-text">
                failed (attempt {run.attempts} of {run.max_attempts}): {run.error}
              </span>
            ) : (
              <span className="ok-text">succeeded</span>
            ),
        },
        {
          header: 'Took',
          num: true,
          cell: (run) => (run.duration_ms === null ? '—' : `${formatNumber(run.duration_ms)} ms`),
        },
      ]}
    />
  );
}

function QueuedJobs({ jobs }: { jobs: JobOverview['queued'] }) {
  if (jobs.length === 0) return <p className="muted">No job waiting.</p>;
  return (
    <ul className="plain">
      {jobs.map((job) => (
        <li key={job.id}>
          <strong>{job.task}</strong> #{job.id}:{' '}
          {job.locked_at
            ? `running since ${formatDateTime(job.locked_at)} on ${job.locked_by ?? '?'}`
            : `due ${formatDateTime(job.run_at)}`}
          {job.last_error ? (
            <span className="error-text">
              {' '}
              (attempt {job.attempts}/{job.max_attempts}: {job.last_error})
            </span>
          ) : null}
        </li>
      ))}
    </ul>
  );
}
