package rooms

import (
	"context"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// Bounds of a Temporary Room created through the workspace API (contract
// section 9).
const (
	MaxRoomNameLen  = 100
	MaxRoomLifetime = 7 * 24 * time.Hour
)

// RoomExpired is the status GET /rooms shows for an active room past its
// expiry; it is computed, never stored.
const RoomExpired = "expired"

// ManagedRoom is a Temporary Room as the workspace manages it.
type ManagedRoom struct {
	chat.Room
	CreatedAt time.Time
}

// StatusAt is the room's status as listed at now: "closed", "expired" (an
// active room past its expiry) or "active".
func (r ManagedRoom) StatusAt(now time.Time) string {
	switch {
	case r.Status != chat.RoomActive:
		return chat.RoomClosed
	case !now.Before(r.ExpiresAt):
		return RoomExpired
	}
	return chat.RoomActive
}

// JoinPath is where guests join the room.
func JoinPath(roomID string) string { return "/api/v1/external/rooms/" + roomID + "/guests" }

// RoomStore keeps the workspace's rooms.
type RoomStore interface {
	// CreateRoom stores a new room so that it can be joined, is listed in
	// its workspace and makes its guests readers of its channel. Errors:
	// EConflict when a room with its id exists; EUnavailable.
	CreateRoom(ctx context.Context, r ManagedRoom) error
	// Rooms returns up to limit rooms of workspaceID, newest first, after
	// the position after. Errors: EValidation on "cursor"; EUnavailable.
	Rooms(ctx context.Context, workspaceID, after string, limit int) (chat.Page[ManagedRoom], error)
	// ManagedRoom returns room roomID. Errors: ENotFound; EUnavailable.
	ManagedRoom(ctx context.Context, roomID string) (ManagedRoom, error)
	// CloseRoom marks r closed everywhere its status is kept, in one write.
	// Errors: ENotFound when r is no longer stored; EUnavailable.
	CloseRoom(ctx context.Context, r ManagedRoom) error
}

// Manager creates, lists and closes a workspace's Temporary Rooms.
type Manager struct {
	Store RoomStore
	IDs   *chat.IDs
	Now   chat.Clock
}

// CreateRequest is the body of POST /rooms, as decoded.
type CreateRequest struct {
	ChannelID string
	Name      string
	ExpiresAt string
}

// Create opens a room on req.ChannelID for p. The decisions, in order:
// EValidation on name (1–100 characters after trimming, no control or
// format characters) and expires_at (RFC 3339, in the future, at most 7
// days ahead; kept to the second); EForbidden when p is not a member of
// the channel (a channel of another workspace, an unknown or malformed id
// included). Errors otherwise: those of RoomStore.CreateRoom.
func (m *Manager) Create(ctx context.Context, p workspaces.Principal, req CreateRequest) (ManagedRoom, error) {
	now := m.Now().UTC()
	var v chat.Validation
	name, problem := NormalizeRoomName(req.Name)
	if problem != "" {
		v.Add("name", problem)
	}
	exp, err := chat.ParseTime(req.ExpiresAt)
	exp = exp.UTC().Truncate(time.Second)
	switch {
	case err != nil:
		v.Add("expires_at", "The expires at field must be a valid RFC 3339 date such as 2026-11-22T12:00:00Z.")
	case !exp.After(now):
		v.Add("expires_at", "The expires at field must be a date in the future.")
	case exp.After(now.Add(MaxRoomLifetime)):
		v.Add("expires_at", "The expires at field must not be more than 7 days ahead.")
	}
	if err := v.Err(); err != nil {
		return ManagedRoom{}, err
	}
	if !p.MemberOf(req.ChannelID) {
		return ManagedRoom{}, workspaces.ErrForbidden()
	}
	r := ManagedRoom{Room: chat.Room{ID: m.IDs.New(now), WorkspaceID: p.WorkspaceID, ChannelID: req.ChannelID,
		Name: name, Status: chat.RoomActive, ExpiresAt: exp}, CreatedAt: now}
	if err := m.Store.CreateRoom(ctx, r); err != nil {
		return ManagedRoom{}, err
	}
	return r, nil
}

// NormalizeRoomName trims s and reports the problem with it, if any: the
// nickname's rule (control characters, line and paragraph separators and
// format characters other than ZWJ are refused) with 100 characters.
func NormalizeRoomName(s string) (string, string) {
	return normalizeName("name", MaxRoomNameLen, s)
}

// List returns a page of p's workspace's rooms, newest first. Errors: those
// of RoomStore.Rooms.
func (m *Manager) List(ctx context.Context, p workspaces.Principal, after string, limit int) (chat.Page[ManagedRoom], error) {
	return m.Store.Rooms(ctx, p.WorkspaceID, after, limit)
}

// Close closes room roomID for p and returns it. Closing a closed room
// changes nothing and answers the same. The decisions, in order: ENotFound
// for a malformed id (no store call), an unknown room or a room of another
// workspace (the same answer, so rooms cannot be probed); EForbidden when p
// is neither a member of the room's channel nor an admin. Guests are not
// touched one by one: their requests read the room's status. Errors
// otherwise: those of RoomStore.
func (m *Manager) Close(ctx context.Context, p workspaces.Principal, roomID string) (ManagedRoom, error) {
	notFound := chat.Errorf(chat.ENotFound, "The requested resource was not found.")
	if !chat.ValidID(roomID) {
		return ManagedRoom{}, notFound
	}
	r, err := m.Store.ManagedRoom(ctx, roomID)
	if chat.IsCode(err, chat.ENotFound) || err == nil && r.WorkspaceID != p.WorkspaceID {
		return ManagedRoom{}, notFound
	}
	if err != nil {
		return ManagedRoom{}, err
	}
	if !p.MemberOf(r.ChannelID) && !p.IsAdmin() {
		return ManagedRoom{}, workspaces.ErrForbidden()
	}
	if r.Status == chat.RoomClosed {
		return r, nil
	}
	if err := m.Store.CloseRoom(ctx, r); err != nil {
		if chat.IsCode(err, chat.ENotFound) {
			return ManagedRoom{}, notFound
		}
		return ManagedRoom{}, err
	}
	r.Status = chat.RoomClosed
	return r, nil
}
