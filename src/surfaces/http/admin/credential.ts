import { ADMIN_COOKIE, requestCredential } from '../credentials.js';

/** Admin auth: an admin account's bearer token, or the admin panel's session cookie. */
export const adminCredential = requestCredential({ admits: ['os_api_admin'], cookie: ADMIN_COOKIE });
