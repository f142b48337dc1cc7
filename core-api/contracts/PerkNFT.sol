// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {ERC1155} from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";

/// @title PTS perks
/// @notice ERC-1155 perk collections; the token id is the collection id. Perks are bought with reward tokens
///         through the points-sale contract (SALE_ROLE), the only minter. Each claimed token grants
///         `chargesPerToken` uses ("charges") that the relayer (OPERATOR_ROLE) spends when a holder redeems.
///         Perks are bound to the wallet that claimed them (no transfers), so the per-user maximum and the
///         charges stay meaningful.
contract PerkNFT is ERC1155, AccessControl {
    /// @notice Creates collections and updates any collection (the platform).
    bytes32 public constant COLLECTION_ADMIN_ROLE = keccak256("COLLECTION_ADMIN_ROLE");
    /// @notice The points-sale contract: the only account that mints.
    bytes32 public constant SALE_ROLE = keccak256("SALE_ROLE");
    /// @notice The relayer: spends holders' charges.
    bytes32 public constant OPERATOR_ROLE = keccak256("OPERATOR_ROLE");

    struct Collection {
        /// @notice The brand that owns the collection (receives the sale proceeds; may update the collection).
        address brand;
        /// @notice Price of one token, in reward tokens.
        uint256 price;
        /// @notice Most tokens ever minted in this collection; 0 = unlimited.
        uint256 maxSupply;
        /// @notice Most tokens one wallet may claim; 0 = unlimited.
        uint256 maxPerUser;
        /// @notice Uses granted per claimed token; 0 = not redeemable.
        uint256 chargesPerToken;
        bool active;
        bool exists;
    }

    mapping(uint256 collectionId => Collection) private _collections;
    mapping(uint256 collectionId => uint256) private _totalClaimed;
    mapping(address user => mapping(uint256 collectionId => uint256)) private _claimed;
    mapping(address user => mapping(uint256 collectionId => uint256)) private _charges;

    event CollectionCreated(
        uint256 indexed collectionId,
        address indexed brand,
        uint256 price,
        uint256 maxSupply,
        uint256 maxPerUser,
        uint256 chargesPerToken,
        bool active
    );
    event CollectionUpdated(
        uint256 indexed collectionId, uint256 price, uint256 maxSupply, uint256 maxPerUser, uint256 chargesPerToken, bool active
    );
    event PerkClaimed(address indexed user, uint256 indexed collectionId, uint256 amount, uint256 chargesGranted);
    event ChargeUsed(address indexed holder, uint256 indexed collectionId, uint256 amount, uint256 remaining);

    error CollectionExists(uint256 collectionId);
    error UnknownCollection(uint256 collectionId);
    error CollectionInactive(uint256 collectionId);
    error MaxSupplyExceeded(uint256 collectionId, uint256 maxSupply);
    error MaxPerUserExceeded(uint256 collectionId, address user, uint256 maxPerUser);
    error MaxSupplyBelowClaimed(uint256 collectionId, uint256 claimed);
    error NotCollectionManager(uint256 collectionId, address account);
    error InsufficientCharges(address holder, uint256 collectionId, uint256 remaining, uint256 requested);
    error ZeroAmount();
    error ZeroAddress();
    error PerkNonTransferable();

    constructor(string memory uri_, address admin) ERC1155(uri_) {
        if (admin == address(0)) revert ZeroAddress();
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(COLLECTION_ADMIN_ROLE, admin);
    }

    function createCollection(
        uint256 collectionId,
        address brand,
        uint256 price,
        uint256 maxSupply,
        uint256 maxPerUser,
        uint256 chargesPerToken,
        bool active
    ) external onlyRole(COLLECTION_ADMIN_ROLE) {
        if (brand == address(0)) revert ZeroAddress();
        if (_collections[collectionId].exists) revert CollectionExists(collectionId);
        _collections[collectionId] = Collection(brand, price, maxSupply, maxPerUser, chargesPerToken, active, true);
        emit CollectionCreated(collectionId, brand, price, maxSupply, maxPerUser, chargesPerToken, active);
    }

    /// @notice By the platform (COLLECTION_ADMIN_ROLE) or the collection's brand. A new `chargesPerToken` applies
    ///         to later claims only; `maxSupply` cannot drop below what was already claimed.
    function updateCollection(
        uint256 collectionId,
        uint256 price,
        uint256 maxSupply,
        uint256 maxPerUser,
        uint256 chargesPerToken,
        bool active
    ) external {
        Collection storage c = _managed(collectionId);
        uint256 claimed = _totalClaimed[collectionId];
        if (maxSupply != 0 && maxSupply < claimed) revert MaxSupplyBelowClaimed(collectionId, claimed);
        c.price = price;
        c.maxSupply = maxSupply;
        c.maxPerUser = maxPerUser;
        c.chargesPerToken = chargesPerToken;
        c.active = active;
        emit CollectionUpdated(collectionId, price, maxSupply, maxPerUser, chargesPerToken, active);
    }

    function setActive(uint256 collectionId, bool active) external {
        Collection storage c = _managed(collectionId);
        c.active = active;
        emit CollectionUpdated(collectionId, c.price, c.maxSupply, c.maxPerUser, c.chargesPerToken, active);
    }

    /// @notice Mints `amount` perks of `collectionId` to `to`, enforcing the active flag, supply and per-user max.
    function mint(address to, uint256 collectionId, uint256 amount) external onlyRole(SALE_ROLE) {
        if (amount == 0) revert ZeroAmount();
        Collection storage c = _collections[collectionId];
        if (!c.exists) revert UnknownCollection(collectionId);
        if (!c.active) revert CollectionInactive(collectionId);
        uint256 total = _totalClaimed[collectionId] + amount;
        if (c.maxSupply != 0 && total > c.maxSupply) revert MaxSupplyExceeded(collectionId, c.maxSupply);
        uint256 claimed = _claimed[to][collectionId] + amount;
        if (c.maxPerUser != 0 && claimed > c.maxPerUser) revert MaxPerUserExceeded(collectionId, to, c.maxPerUser);
        _totalClaimed[collectionId] = total;
        _claimed[to][collectionId] = claimed;
        uint256 granted = amount * c.chargesPerToken;
        _charges[to][collectionId] += granted;
        emit PerkClaimed(to, collectionId, amount, granted);
        _mint(to, collectionId, amount, "");
    }

    /// @notice Spends `amount` of `tokenHolder`'s remaining charges in `collectionId` (a redemption).
    function useCharge(address tokenHolder, uint256 collectionId, uint256 amount) external onlyRole(OPERATOR_ROLE) {
        if (amount == 0) revert ZeroAmount();
        uint256 remaining = _charges[tokenHolder][collectionId];
        if (remaining < amount) revert InsufficientCharges(tokenHolder, collectionId, remaining, amount);
        remaining -= amount;
        _charges[tokenHolder][collectionId] = remaining;
        emit ChargeUsed(tokenHolder, collectionId, amount, remaining);
    }

    function collection(uint256 collectionId) external view returns (Collection memory) {
        Collection memory c = _collections[collectionId];
        if (!c.exists) revert UnknownCollection(collectionId);
        return c;
    }

    function collectionExists(uint256 collectionId) external view returns (bool) {
        return _collections[collectionId].exists;
    }

    function claimedBy(address user, uint256 collectionId) external view returns (uint256) {
        return _claimed[user][collectionId];
    }

    function remainingCharges(address user, uint256 collectionId) external view returns (uint256) {
        return _charges[user][collectionId];
    }

    function totalClaimed(uint256 collectionId) external view returns (uint256) {
        return _totalClaimed[collectionId];
    }

    function setURI(string calldata uri_) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setURI(uri_);
    }

    function supportsInterface(bytes4 interfaceId) public view override(ERC1155, AccessControl) returns (bool) {
        return super.supportsInterface(interfaceId);
    }

    function _managed(uint256 collectionId) private view returns (Collection storage c) {
        c = _collections[collectionId];
        if (!c.exists) revert UnknownCollection(collectionId);
        if (msg.sender != c.brand && !hasRole(COLLECTION_ADMIN_ROLE, msg.sender)) {
            revert NotCollectionManager(collectionId, msg.sender);
        }
    }

    /// @dev Mints only: a transfer would move a perk (and its charges) away from the wallet that claimed it.
    function _update(address from, address to, uint256[] memory ids, uint256[] memory values) internal override {
        if (from != address(0)) revert PerkNonTransferable();
        super._update(from, to, ids, values);
    }
}
