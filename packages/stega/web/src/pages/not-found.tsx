import { Link } from 'react-router';
import { useTitle } from '../hooks/use-title.js';

export function NotFoundPage({ forbidden = false }: { forbidden?: boolean }) {
  useTitle(forbidden ? 'Admins only' : 'Not found');
  return (
    <div className="page">
      <h1>{forbidden ? 'Admins only' : 'Page not found'}</h1>
      <p>
        {forbidden
          ? 'This page is for admins. Sign in as an admin to see it.'
          : 'There is nothing at this address.'}
      </p>
      <p>
        <Link to="/tickets">Go to the tickets</Link>
      </p>
    </div>
  );
}
