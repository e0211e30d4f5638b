package fixturestore

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/dynamo/glossarystore"
	"github.com/chatbridge/chat/pkg/fixture"
)

// Apply writes a fixture document: it creates or updates every workspace,
// user, API token, channel, channel member, Temporary Room and webhook the
// document lists, so that applying the same document again leaves the same
// items (only updated_at changes).
//
// What the document lists is authoritative for those items; what it does not
// list is left alone, with one exception: a channel's members are its
// complete list, so reader items of users no longer listed are deleted.
// Apply never deletes a user, channel, room or webhook, and never touches
// guests, guest sessions, messages or translations, so re-applying does not
// disturb a running room. A user whose api_token changed gets the new token
// and the old one is revoked. Outbound and support webhooks keep their stored
// created_at (and so their place in the oldest-first lists) unless the
// document gives one.
//
// Apply reads everything it needs first and writes only when the document is
// valid (d.Validate) and consistent with what is stored: a room cannot move
// to another channel, and a room or inbound webhook id cannot move to another
// workspace. The writes are batched, not one transaction: after a failure
// part of the document may be written, and applying it again completes it.
//
// Errors: chat.EValidation for an invalid or inconsistent document (nothing
// is written); chat.EUnavailable when DynamoDB failed after retries;
// chat.EInternal otherwise.
func (s *Store) Apply(ctx context.Context, d *fixture.Document, now time.Time) error {
	if err := d.Validate(); err != nil {
		return err
	}
	now = now.UTC()
	states := make([]workspaceState, len(d.Workspaces))
	for i, w := range d.Workspaces {
		st, err := s.loadWorkspaceState(ctx, w)
		if err != nil {
			return err
		}
		states[i] = st
	}
	metas, err := s.loadMetas(ctx, d)
	if err != nil {
		return err
	}
	if err := checkStored(d, metas); err != nil {
		return err
	}
	// A token that any user of the document holds now must never be revoked,
	// even when it used to be another user's.
	tokens := map[string]bool{}
	for _, w := range d.Workspaces {
		for _, u := range w.Users {
			tokens[chat.HashToken(u.APIToken)] = true
		}
	}
	var p writePlan
	for i, w := range d.Workspaces {
		p.workspace(w, states[i], metas, tokens, now)
	}
	return s.BatchWrite(ctx, "apply fixture", p.reqs)
}

// workspaceState is what is stored for one workspace of the document, as far
// as applying it needs to know.
type workspaceState struct {
	users    map[string]dynamo.UserItem
	outbound map[string][]dynamo.OutboundItem // by webhook id, oldest first
	support  map[string][]dynamo.SupportItem  // by webhook id, oldest first
	readers  map[string][]string              // channel id -> user ids with a reader item
	channels map[string]dynamo.ChannelItem    // by channel id
	memberOf map[string]map[string]string     // user id -> channel id -> sk of its member channel item
}

// storedMetas are the stored #META items of the document's rooms and inbound
// webhooks, by id.
type storedMetas struct {
	rooms   map[string]dynamo.RoomRecord
	inbound map[string]dynamo.InboundItem
	listed  map[string]string // by-id pk of an outbound or support webhook -> its workspace
}

// loadWorkspaceState reads the workspace's partition (users, webhooks) and
// the user readers of each of its channels.
func (s *Store) loadWorkspaceState(ctx context.Context, w fixture.Workspace) (workspaceState, error) {
	st := workspaceState{
		users:    map[string]dynamo.UserItem{},
		outbound: map[string][]dynamo.OutboundItem{},
		support:  map[string][]dynamo.SupportItem{},
		readers:  map[string][]string{},
		channels: map[string]dynamo.ChannelItem{},
		memberOf: map[string]map[string]string{},
	}
	items, err := s.QueryAll(ctx, "load workspace "+w.ID, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(dynamo.WsPK(w.ID))},
	})
	if err != nil {
		return st, err
	}
	for _, it := range items {
		switch sk := dynamo.GetS(it, dynamo.AttrSK); {
		case strings.HasPrefix(sk, "USER#"):
			var u dynamo.UserItem
			if err := attributevalue.UnmarshalMap(it, &u); err != nil {
				return st, chat.Internal(fmt.Errorf("dynamo: unmarshal %s: %w", sk, err))
			}
			st.users[u.ID] = u
		case strings.HasPrefix(sk, "OWH#"):
			var o dynamo.OutboundItem
			if err := attributevalue.UnmarshalMap(it, &o); err != nil {
				return st, chat.Internal(fmt.Errorf("dynamo: unmarshal %s: %w", sk, err))
			}
			st.outbound[o.ID] = append(st.outbound[o.ID], o)
		case strings.HasPrefix(sk, "SWH#"):
			var o dynamo.SupportItem
			if err := attributevalue.UnmarshalMap(it, &o); err != nil {
				return st, chat.Internal(fmt.Errorf("dynamo: unmarshal %s: %w", sk, err))
			}
			st.support[o.ID] = append(st.support[o.ID], o)
		case strings.HasPrefix(sk, "CHAN#"):
			var c dynamo.ChannelItem
			if err := attributevalue.UnmarshalMap(it, &c); err != nil {
				return st, chat.Internal(fmt.Errorf("dynamo: unmarshal %s: %w", sk, err))
			}
			st.channels[c.ID] = c
		}
	}
	users := map[string]bool{}
	for id := range st.users {
		users[id] = true
	}
	for _, u := range w.Users {
		users[u.ID] = true
	}
	for u := range users {
		chans, err := s.memberChannelKeys(ctx, w.ID, u)
		if err != nil {
			return st, err
		}
		st.memberOf[u] = chans
	}
	for _, c := range w.Channels {
		readers, err := s.QueryAll(ctx, "load readers of "+c.ID, &dynamodb.QueryInput{
			KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :p)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(dynamo.ChanPK(c.ID)), ":p": dynamo.Str(dynamo.ReaderUserSK(""))},
			ProjectionExpression:      aws.String(dynamo.AttrSK),
		})
		if err != nil {
			return st, err
		}
		for _, it := range readers {
			st.readers[c.ID] = append(st.readers[c.ID], strings.TrimPrefix(dynamo.GetS(it, dynamo.AttrSK), dynamo.ReaderUserSK("")))
		}
	}
	return st, nil
}

// loadMetas reads the stored rooms and inbound webhooks of the document.
func (s *Store) loadMetas(ctx context.Context, d *fixture.Document) (storedMetas, error) {
	m := storedMetas{rooms: map[string]dynamo.RoomRecord{}, inbound: map[string]dynamo.InboundItem{}, listed: map[string]string{}}
	var keys []map[string]types.AttributeValue
	for _, w := range d.Workspaces {
		for _, r := range w.TemporaryRooms {
			keys = append(keys, dynamo.Key(dynamo.RoomPK(r.RoomID), dynamo.MetaSK))
		}
		for _, h := range w.InboundWebhooks {
			keys = append(keys, dynamo.Key(dynamo.InboundPK(h.ID), dynamo.MetaSK))
		}
		for _, h := range w.OutboundWebhooks {
			keys = append(keys, dynamo.Key(dynamo.OutboundPK(h.ID), dynamo.MetaSK))
		}
		for _, h := range w.SupportWebhooks {
			keys = append(keys, dynamo.Key(dynamo.SupportPK(h.ID), dynamo.MetaSK))
		}
	}
	for start := 0; start < len(keys); start += dynamo.MaxBatchGet {
		items, err := s.BatchGet(ctx, "load rooms and inbound webhooks", keys[start:min(start+dynamo.MaxBatchGet, len(keys))])
		if err != nil {
			return m, err
		}
		for _, it := range items {
			switch pk := dynamo.GetS(it, dynamo.AttrPK); {
			case strings.HasPrefix(pk, dynamo.RoomPK("")):
				var r dynamo.RoomRecord
				if err := attributevalue.UnmarshalMap(it, &r); err != nil {
					return m, chat.Internal(fmt.Errorf("dynamo: unmarshal %s: %w", pk, err))
				}
				m.rooms[r.ID] = r
			case strings.HasPrefix(pk, dynamo.InboundPK("")):
				var h dynamo.InboundItem
				if err := attributevalue.UnmarshalMap(it, &h); err != nil {
					return m, chat.Internal(fmt.Errorf("dynamo: unmarshal %s: %w", pk, err))
				}
				m.inbound[h.ID] = h
			case strings.HasPrefix(pk, dynamo.OutboundPK("")), strings.HasPrefix(pk, dynamo.SupportPK("")):
				m.listed[pk] = dynamo.GetS(it, "workspace_id")
			}
		}
	}
	return m, nil
}

// checkStored refuses a document that would move a stored room to another
// channel or workspace, or an inbound webhook to another workspace: its
// guests, sessions and logs would be left pointing at the old place, and an
// id reused by mistake would take over another workspace's room or webhook.
func checkStored(d *fixture.Document, m storedMetas) error {
	var v chat.Validation
	var lines []string
	add := func(path, msg string) {
		v.Add(path, msg)
		lines = append(lines, "\n  "+path+": "+msg)
	}
	for wi, w := range d.Workspaces {
		for i, r := range w.TemporaryRooms {
			old, ok := m.rooms[r.RoomID]
			switch {
			case !ok:
			case old.WorkspaceID != w.ID:
				add(fmt.Sprintf("workspaces[%d].temporary_rooms[%d].room_id", wi, i), "names a room of another workspace")
			case old.ChannelID != r.ChannelID:
				add(fmt.Sprintf("workspaces[%d].temporary_rooms[%d].channel_id", wi, i),
					fmt.Sprintf("cannot change: the room belongs to channel %s", old.ChannelID))
			}
		}
		for i, h := range w.InboundWebhooks {
			if old, ok := m.inbound[h.ID]; ok && old.WorkspaceID != w.ID {
				add(fmt.Sprintf("workspaces[%d].inbound_webhooks[%d].id", wi, i), "names an inbound webhook of another workspace")
			}
		}
		for i, h := range w.OutboundWebhooks {
			if ws, ok := m.listed[dynamo.OutboundPK(h.ID)]; ok && ws != w.ID {
				add(fmt.Sprintf("workspaces[%d].outbound_webhooks[%d].id", wi, i), "names an outbound webhook of another workspace")
			}
		}
		for i, h := range w.SupportWebhooks {
			if ws, ok := m.listed[dynamo.SupportPK(h.ID)]; ok && ws != w.ID {
				add(fmt.Sprintf("workspaces[%d].support_webhooks[%d].id", wi, i), "names a support webhook of another workspace")
			}
		}
	}
	err := v.Err()
	if err != nil {
		err.(*chat.Error).Message = fmt.Sprintf("fixture: %d conflict(s) with stored data:%s", len(lines), strings.Join(lines, ""))
	}
	return err
}

// writePlan is the list of writes of one Apply, at most one per key (a
// BatchWriteItem refuses two requests for one key).
type writePlan struct {
	reqs []types.WriteRequest
	at   map[string]int // pk + "\x00" + sk -> index in reqs
}

func (p *writePlan) add(pk, sk string, r types.WriteRequest) {
	if p.at == nil {
		p.at = map[string]int{}
	}
	k := pk + "\x00" + sk
	if i, ok := p.at[k]; ok {
		p.reqs[i] = r
		return
	}
	p.at[k] = len(p.reqs)
	p.reqs = append(p.reqs, r)
}

func (p *writePlan) put(item any) {
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		// Items are our own structs of strings, numbers and times: a
		// marshal failure is a programming error.
		panic("dynamo: marshal " + err.Error())
	}
	p.add(dynamo.GetS(av, dynamo.AttrPK), dynamo.GetS(av, dynamo.AttrSK), types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
}

func (p *writePlan) del(pk, sk string) {
	p.add(pk, sk, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: dynamo.Key(pk, sk)}})
}

// workspace plans the writes of one workspace. tokens holds the hashes of
// every API token in the document.
func (p *writePlan) workspace(w fixture.Workspace, st workspaceState, m storedMetas, tokens map[string]bool, now time.Time) {
	ws := w.ID
	p.put(dynamo.WorkspaceItem{PK: dynamo.WsPK(ws), SK: dynamo.MetaSK, ID: ws, Name: w.Name, DefaultLanguage: w.DefaultLanguage,
		WebhookQuota: *w.WebhookQuotaPerMinute, TranslationBudget: *w.TranslationCharsPerDay})
	if w.Glossary != nil {
		meta, version, err := glossarystore.Items(ws, *w.Glossary, now)
		if err != nil {
			panic(err.Error()) // a validated glossary always marshals
		}
		for _, it := range []map[string]types.AttributeValue{meta, version} {
			p.add(dynamo.GetS(it, dynamo.AttrPK), dynamo.GetS(it, dynamo.AttrSK), types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		}
	}

	// Channels first: a user's token item carries the user's channels.
	chanCreated := map[string]time.Time{}
	for _, c := range w.Channels {
		created := st.channels[c.ID].CreatedAt
		if created.IsZero() {
			created = now
		}
		chanCreated[c.ID] = created.UTC()
	}
	userChans := userChannels(w, st)

	langs := map[string]string{}
	// userTokens is each user's current API token as their reader items name
	// it (chat.SeatToken): realtime stops pushing to a connection
	// subscribed with any other.
	userTokens := map[string]string{}
	for _, u := range w.Users {
		langs[u.ID] = u.PreferredLanguage
		hash := chat.HashToken(u.APIToken)
		userTokens[u.ID] = chat.SeatToken(hash)
		p.put(dynamo.UserItem{PK: dynamo.WsPK(ws), SK: dynamo.UserSK(u.ID), ID: u.ID, WorkspaceID: ws, Name: u.Name,
			PreferredLanguage: u.PreferredLanguage, TokenHash: hash, Role: u.Role})
		p.put(dynamo.APITokenItem{PK: dynamo.APITokenPK(hash), SK: dynamo.MetaSK, WorkspaceID: ws, UserID: u.ID,
			Name: u.Name, Role: u.Role, PreferredLanguage: u.PreferredLanguage, Channels: userChans[u.ID]})
		if old := st.users[u.ID].TokenHash; old != "" && old != hash && !tokens[old] {
			p.put(dynamo.APITokenItem{PK: dynamo.APITokenPK(old), SK: dynamo.MetaSK, WorkspaceID: ws, UserID: u.ID, Revoked: true})
		}
	}

	for _, c := range w.Channels {
		created := chanCreated[c.ID]
		p.put(dynamo.ChannelItem{PK: dynamo.WsPK(ws), SK: dynamo.ChanSK(c.ID), ID: c.ID, WorkspaceID: ws, Name: c.Name, Members: c.Members, CreatedAt: created})
		members := map[string]bool{}
		for _, u := range c.Members {
			members[u] = true
			p.put(dynamo.ReaderItem{PK: dynamo.ChanPK(c.ID), SK: dynamo.ReaderUserSK(u), Kind: chat.AuthorUser, ID: u, Language: langs[u], Token: userTokens[u]})
			p.put(dynamo.MemberChannelItem{PK: dynamo.MemberPK(ws, u), SK: dynamo.MemberChannelSK(created, c.ID), ID: c.ID, WorkspaceID: ws,
				Name: c.Name, CreatedAt: created})
		}
		for u, chans := range st.memberOf {
			if sk, ok := chans[c.ID]; ok && (!members[u] || sk != dynamo.MemberChannelSK(created, c.ID)) {
				p.del(dynamo.MemberPK(ws, u), sk)
			}
		}
		for _, u := range st.readers[c.ID] {
			if !members[u] {
				p.del(dynamo.ChanPK(c.ID), dynamo.ReaderUserSK(u))
			}
		}
	}

	for _, r := range w.TemporaryRooms {
		exp := r.Expires()
		created := m.rooms[r.RoomID].CreatedAt
		if created.IsZero() {
			created = now
		}
		rec := dynamo.RoomRecord{RoomItem: dynamo.RoomItem{PK: dynamo.RoomPK(r.RoomID), SK: dynamo.MetaSK, ID: r.RoomID, WorkspaceID: ws, ChannelID: r.ChannelID,
			Name: r.Name, Status: r.Status, ExpiresAt: exp, ExpiresEpoch: exp.Unix()}, CreatedAt: created.UTC()}
		p.put(rec)
		p.put(dynamo.WsRoomItemOf(rec))
		p.put(dynamo.ChannelRoomItem{PK: dynamo.ChanPK(r.ChannelID), SK: dynamo.RoomSK(r.RoomID), Kind: dynamo.KindRoom, ID: r.RoomID,
			Status: r.Status, ExpiresEpoch: exp.Unix()})
	}

	for _, h := range w.InboundWebhooks {
		created := now
		if old, ok := m.inbound[h.ID]; ok {
			created = old.CreatedAt
		}
		it := dynamo.InboundItem{PK: dynamo.InboundPK(h.ID), SK: dynamo.MetaSK, ID: h.ID, WorkspaceID: ws, ChannelID: h.ChannelID,
			BotName: h.BotName, BotAvatarURL: h.BotAvatarURL, SecretHash: chat.HashToken(h.Secret),
			SignatureRequired: *h.SignatureRequired, SigningSecret: h.SigningSecret, Enabled: *h.Enabled,
			CreatedAt: created, UpdatedAt: now}
		p.put(it)
		// The listed twin (webhooks.go); created is kept, so its key is too.
		it.PK, it.SK = dynamo.WsPK(ws), dynamo.InboundSK(created, h.ID)
		p.put(it)
	}

	for _, h := range w.OutboundWebhooks {
		doc, given := h.Created()
		created, sk := placeListed(p, st.outbound[h.ID], doc, given, now, func(t time.Time) string { return dynamo.OutboundSK(t, h.ID) })
		it := dynamo.OutboundItem{PK: dynamo.WsPK(ws), SK: sk, ID: h.ID, WorkspaceID: ws, Name: h.Name, URL: h.URL,
			Events: h.Events, Active: *h.Active, SigningSecret: h.SigningSecret, RateLimit: rateLimit(h.RateLimit), CreatedAt: created, UpdatedAt: now}
		p.put(it)
		it.PK, it.SK = dynamo.OutboundPK(h.ID), dynamo.MetaSK // the by-id twin (webhooks.go)
		p.put(it)
	}

	for _, h := range w.SupportWebhooks {
		doc, given := h.Created()
		created, sk := placeListed(p, st.support[h.ID], doc, given, now, func(t time.Time) string { return dynamo.SupportSK(t, h.ID) })
		it := dynamo.SupportItem{PK: dynamo.WsPK(ws), SK: sk, ID: h.ID, WorkspaceID: ws, Name: h.Name, URL: h.URL,
			Active: *h.Active, SigningSecret: h.SigningSecret, RateLimit: rateLimit(h.RateLimit), CreatedAt: created, UpdatedAt: now}
		p.put(it)
		it.PK, it.SK = dynamo.SupportPK(h.ID), dynamo.MetaSK // the by-id twin (webhooks.go)
		p.put(it)
	}
}

// listedItem is an item of a creation-ordered list (outbound and support
// webhooks), whose sort key holds its created_at.
type listedItem interface {
	Keys() (pk, sk string)
	Created() time.Time
}

// placeListed decides a listed webhook's created_at and sort key: the
// document's created_at when given, else the stored one (re-applying keeps
// the place in the list), else now; stored copies under another sort key
// are deleted, so that a moved webhook is listed once.
func placeListed[T listedItem](p *writePlan, stored []T, doc time.Time, given bool, now time.Time, skOf func(time.Time) string) (time.Time, string) {
	created := doc
	if !given {
		created = now
		if len(stored) > 0 {
			created = stored[0].Created().UTC()
		}
	}
	sk := skOf(created)
	for _, o := range stored {
		if pk, osk := o.Keys(); osk != sk {
			p.del(pk, osk)
		}
	}
	return created, sk
}

// userChannels returns, for each user of w, the ids of the channels the
// user is a member of once w is applied, sorted: the stored memberships of
// channels w does not list, and w's own channels' member lists.
func userChannels(w fixture.Workspace, st workspaceState) map[string][]string {
	listed := map[string]bool{}
	for _, c := range w.Channels {
		listed[c.ID] = true
	}
	sets := map[string]map[string]bool{}
	for _, u := range w.Users {
		sets[u.ID] = map[string]bool{}
		for id := range st.memberOf[u.ID] {
			if !listed[id] {
				sets[u.ID][id] = true
			}
		}
	}
	for _, c := range w.Channels {
		for _, u := range c.Members {
			if sets[u] != nil {
				sets[u][c.ID] = true
			}
		}
	}
	out := make(map[string][]string, len(sets))
	for u, set := range sets {
		ids := make([]string, 0, len(set))
		for id := range set {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		out[u] = ids
	}
	return out
}

// memberChannelKeys returns the sort keys of user's channel list, by
// channel id, for apply.
func (s *Store) memberChannelKeys(ctx context.Context, ws, user string) (map[string]string, error) {
	items, err := s.QueryAll(ctx, "load channels of user "+user, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :p)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(dynamo.MemberPK(ws, user)), ":p": dynamo.Str("CHAN#")},
		ProjectionExpression:      aws.String(dynamo.AttrSK),
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(items))
	for _, it := range items {
		sk := dynamo.GetS(it, dynamo.AttrSK)
		out[sk[strings.LastIndexByte(sk, '#')+1:]] = sk
	}
	return out, nil
}

// rateLimit is a document's rate_limit as the webhook item keeps it: 0 (no
// attribute) for none.
func rateLimit(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}
