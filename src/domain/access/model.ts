/** One user's grants, stored under the user's id: the spaces and devices a non-admin account sees. */
export interface UserAccess {
  /** The user's id. */
  id: string;
  spaceIds: string[];
  deviceIds: string[];
  createdAt: number;
  updatedAt: number;
}

/** A user's grants as answered: empty lists and `updatedAt: null` for a user never granted anything. */
export interface UserAccessView {
  userId: string;
  spaceIds: string[];
  deviceIds: string[];
  updatedAt: number | null;
}
