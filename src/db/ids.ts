/** The largest row id both databases store in an `integer` column; larger ids cannot exist. */
export const MAX_ID = 2_147_483_647
