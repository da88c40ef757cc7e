package chat

// The writes under the Service's methods, for chat's tests that run them over every store with the limits and
// times the test sets (flows_test.go): the Service takes these from the tenant's plan and its clock.
var (
	CreateKnowledge    = createKnowledge
	UpdateKnowledge    = updateKnowledge
	DeleteKnowledge    = deleteKnowledge
	CreateSource       = createSource
	DeleteSource       = deleteSource
	SaveLead           = saveFormLead
	DeleteLead         = deleteLead
	DeleteConversation = deleteConversation
	EraseSubject       = eraseSubject
	ReplayDelivery     = replayDelivery
	RecordAttempt      = recordAttempt
	RemovePage         = removePage
	ReplacePage        = replacePage
	SaveRating         = saveRating
	SaveSatisfaction   = saveSatisfaction
	SweepExpired       = sweepExpired
)
