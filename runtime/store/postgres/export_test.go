package postgres

// MerchantTables are the tables EraseMerchant deletes from, for the schema test.
var MerchantTables = merchantTables
